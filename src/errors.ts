/** One error taxonomy; `src/http/status.ts` is the only place that maps codes to HTTP. */

export type ErrorCode =
  | "invalid_ip"
  | "not_found"
  | "bad_request"
  | "payload_too_large"
  | "unauthorized"
  | "rate_limited"
  | "data_unavailable";

/** An error whose message is safe to show to the client. */
export class AppError extends Error {
  constructor(readonly code: ErrorCode, message: string) {
    super(message);
    this.name = "AppError";
  }
}

/** The text is not a valid IP address. */
export class InvalidIpError extends AppError {
  constructor(readonly input: string, reason: string) {
    super("invalid_ip", `Invalid IP address ${JSON.stringify(input)}: ${reason}`);
  }
}

/** A valid address that no loaded source knows. */
export class NotFoundError extends AppError {
  constructor(readonly ip: string, rangeName: string | null) {
    super(
      "not_found",
      rangeName
        ? `No data for IP address ${JSON.stringify(ip)}: it is in a ${rangeName} range`
        : `No data for IP address ${JSON.stringify(ip)}`,
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
