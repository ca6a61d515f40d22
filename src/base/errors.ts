/** One error taxonomy, and the one mapping of its codes to HTTP statuses (STATUS_BY_CODE). */

export type ErrorCode =
  | "invalid_ip"
  | "not_found"
  | "bad_request"
  | "payload_too_large"
  | "uri_too_long"
  | "unsupported_media_type"
  | "method_not_allowed"
  | "unauthorized"
  | "rate_limited"
  | "data_unavailable"
  | "history_unavailable"
  | "invalid_time";

/** Longest part of a client's input echoed back, in code points. */
export const ECHO_LIMIT = 64;

/**
 * Client input cut to {@link ECHO_LIMIT} code points, an ellipsis marking the
 * cut; shorter input unchanged. The one echo cap: every message and failed item
 * that repeats input goes through it. Counted in code points, so a surrogate
 * pair (an emoji) is never split; a combining mark counts as one, so a long run
 * of them is cut like any other text.
 *
 * @example capInput("😀".repeat(100)) // 64 × "😀", then "…"
 */
export function capInput(input: string, limit = ECHO_LIMIT): string {
  let units = 0;
  for (let points = 0; units < input.length; points++) {
    if (points === limit) return `${input.slice(0, units)}…`;
    units += input.codePointAt(units)! > 0xffff ? 2 : 1;
  }
  return input;
}

/**
 * Client input quoted for an error message, capped at {@link ECHO_LIMIT}
 * characters (an ellipsis marks the cut), so a huge value never comes back whole.
 *
 * @example quoteInput("x".repeat(100)) // '"xxx…x…"' (64 x's, then …)
 */
export function quoteInput(input: string, limit = ECHO_LIMIT): string {
  const shown = capInput(input, limit);
  // JSON.stringify escapes C0 controls; line and paragraph separators and C1 controls too.
  return JSON.stringify(shown).replace(
    /[\u0080-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** An error whose message is safe to show to the client. */
export class AppError extends Error {
  constructor(readonly code: ErrorCode, message: string) {
    super(message);
    this.name = "AppError";
  }
}

/** The text is not a valid IP address. */
export class InvalidIpError extends AppError {
  constructor(input: string, reason: string) {
    super("invalid_ip", invalidIpMessage(input, reason));
  }
}

/** InvalidIpError's message, for a failed bulk item made without the error. */
export function invalidIpMessage(input: string, reason: string): string {
  return `Invalid IP address ${quoteInput(input)}: ${reason}`;
}

/** A valid address that no loaded source knows. */
export class NotFoundError extends AppError {
  /** `rangeName`: the reserved range the address is in (`private network`), or null. */
  constructor(readonly ip: string, readonly rangeName: string | null) {
    super(
      "not_found",
      rangeName
        ? `No data for IP address ${quoteInput(ip)}: it is in a ${rangeName} range`
        : `No data for IP address ${quoteInput(ip)}`,
    );
  }
}

/** Malformed request input other than the address (get names, bulk list, body). */
export class BadRequestError extends AppError {
  constructor(message: string) {
    super("bad_request", message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message: string) {
    super("payload_too_large", message);
  }
}

/** No usable database is loaded. */
export class DataUnavailableError extends AppError {
  constructor(message: string) {
    super("data_unavailable", message);
  }
}

/** No valid API key where one is needed; the key itself is never echoed. */
export class UnauthorizedError extends AppError {
  constructor(message: string) {
    super("unauthorized", message);
  }
}

/** Over the caller's rate limit; `retryAfterSeconds` goes into the Retry-After header. */
export class RateLimitedError extends AppError {
  constructor(message: string, readonly retryAfterSeconds: number) {
    super("rate_limited", message);
  }
}

/** A request body in a media type the route does not read. */
export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super("unsupported_media_type", message);
  }
}

/** A method no route serves (TRACE, PUT, ...); `allow` lists the ones served. */
export class MethodNotAllowedError extends AppError {
  constructor(message: string, readonly allow: readonly string[]) {
    super("method_not_allowed", message);
  }
}

/** An `at` time the kept security-list history does not reach (or none is kept). */
export class HistoryUnavailableError extends AppError {
  constructor(message: string) {
    super("history_unavailable", message);
  }
}

/**
 * A time that is not one (`at=yesterday`), or one that cannot be answered for (in the
 * future): a 400 like any bad request, with its own code so that a caller answering many
 * records (enrich) can tell a record's time from the rest of its request.
 */
export class InvalidTimeError extends AppError {
  constructor(message: string) {
    super("invalid_time", message);
  }
}

/** The one mapping from error codes to HTTP statuses. */
export const STATUS_BY_CODE: Readonly<
  Record<ErrorCode, 400 | 401 | 404 | 405 | 413 | 414 | 415 | 422 | 429 | 503>
> = {
  bad_request: 400,
  invalid_time: 400,
  unauthorized: 401,
  invalid_ip: 404,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  history_unavailable: 422,
  rate_limited: 429,
  data_unavailable: 503,
};
