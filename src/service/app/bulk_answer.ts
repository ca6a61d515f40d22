/**
 * Streamed bulk answers over HTTP (`POST /bulk`, and `GET /bulk/{list}` past
 * IPINTEL_BULK_MAX or with NDJSON asked for): the body is read as the answer
 * is written, and the answer is a stream the socket pulls, batch by batch
 * (src/service/bulk/batches.ts). No framework here: app.ts registers the routes.
 *
 * Before the first batch is answered the request can still fail with a status
 * (400 for an empty list or a malformed body start, 429 when not one unit of
 * the budget is left, before the body is read, 503 while loading); after, a
 * stop is the final record.
 * When the client goes away, the stream is cancelled: it stops reading the
 * body and looking up.
 */

import {
  type BulkInput,
  HTTP_MAX_GAP_BYTES,
  type InputFormat,
  inputParser,
  readInput,
} from "../bulk/input.ts";
import { answerBulk, type BulkEvent, type Grant } from "../bulk/batches.ts";
import {
  type AppError,
  BadRequestError,
  quoteInput,
  UnsupportedMediaTypeError,
} from "../../base/errors.ts";
import type { FieldSelection } from "../../core/format/select.ts";
import { encodeText, type StreamFormat, streamWriter } from "../../core/format/incremental.ts";
import type { Lookup } from "../../core/lookup/lookup.ts";
import { requireIdentityEncoding } from "../http/body.ts";
import type { AppContext } from "../http/env.ts";
import { streamedResponse } from "../http/streamed.ts";

export interface BulkStreamRequest {
  format: StreamFormat;
  selection: FieldSelection | null;
  lang: string | null;
  /** From the `ua` parameter or the User-Agent header; a JSON body's own wins. */
  userAgent: string | null;
  /** `at`: the security lists as they stood then (null: now). */
  at: Date | null;
}

export interface BulkStreamDeps {
  /** The lookup of the data set the whole stream uses (taken when it starts). */
  lookup: Lookup;
  /**
   * Charges units to the caller through the app's admission, the caller's key
   * checked again first (revoked, rotated, a new limit), and records the
   * decision (the first one's RateLimit headers go on the answer, or on its
   * 429). Returns the refusal (a 401 or a 429), else null.
   */
  charge: (units: number) => Promise<AppError | null>;
  /** Units left in the caller's budget after the last charge (null: unlimited). */
  remaining: () => number | null;
  /** Milliseconds with nothing read or written after which the stream ends (0: never). */
  idleTimeoutMs: number;
  logError: (error: unknown) => void;
}

/** The body formats by Content-Type: JSON `{"ips": [...]}`, plain text lines, NDJSON lines. */
export function bodyFormat(headers: Headers): InputFormat {
  requireIdentityEncoding(headers);
  const type = headers.get("content-type");
  const essence = type?.split(";", 1)[0]?.trim().toLowerCase();
  if (essence === "application/json") return "json";
  if (essence === "text/plain") return "text";
  if (essence === "application/x-ndjson" || essence === "application/jsonl") return "ndjson";
  throw new UnsupportedMediaTypeError(
    `Unsupported Content-Type ${
      type === null ? "(none)" : quoteInput(type)
    }: send application/json ({"ips": [...]}), text/plain (one address a line) or application/x-ndjson`,
  );
}

/**
 * Addresses looked up, charged and written at once over HTTP: a quarter of the
 * command line's batch. A batch is alive while the socket drains, so the
 * garbage collector promotes what it holds: a smaller batch keeps less of it
 * alive, so a long stream raises the server's memory less, at the same speed
 * (bench:stream; figures in bench/README.md).
 */
export const HTTP_BATCH_SIZE = 64;

/**
 * Streams the answer to a body of addresses in `format` (see bodyFormat).
 * One unit has been charged before a byte of the body is read (the answer
 * path's charge: a caller with no budget left gets its 429 at once) and pays
 * for the first item; past that, each item pays for itself, and a body that
 * gives no item for HTTP_MAX_GAP_BYTES is refused: every unit charged pays
 * for a bounded amount of parsing, whatever the body holds.
 */
export async function streamBodyAnswer(
  c: AppContext,
  body: ReadableStream<Uint8Array> | null,
  format: InputFormat,
  request: BulkStreamRequest,
  deps: BulkStreamDeps,
): Promise<Response> {
  const parser = inputParser(format);
  const input = body
    ? readInput(body, parser, { maxGapBytes: HTTP_MAX_GAP_BYTES })
    : noInput(parser);
  const userAgent = () => parser.userAgent ?? request.userAgent;
  return await streamAnswer(c, input, userAgent, request, deps, 1);
}

/**
 * Streams the answer to a list already in memory (a long `GET /bulk/{list}`):
 * its first unit charged by the answer path, each further item paying for itself.
 */
export function streamListAnswer(
  c: AppContext,
  items: string[],
  request: BulkStreamRequest,
  deps: BulkStreamDeps,
): Promise<Response> {
  return streamAnswer(c, listInput(items), () => request.userAgent, request, deps, 1);
}

/** `prepaid`: units charged before the stream began, spent by its first items. */
async function streamAnswer(
  c: AppContext,
  input: AsyncIterable<BulkInput[]>,
  userAgent: () => string | null,
  request: BulkStreamRequest,
  deps: BulkStreamDeps,
  prepaid: number,
): Promise<Response> {
  let credit = prepaid;
  const charge = async (units: number): Promise<Grant> => {
    const paid = Math.min(credit, units);
    credit -= paid;
    if (paid === units) return { units, refusal: null };
    const grant = await chargeUnits(deps, units - paid);
    // Refused past what was paid: that part is answered, the rest is charged (and refused) next.
    if (grant.refusal && paid > 0) return { units: paid, refusal: null };
    return { units: paid + grant.units, refusal: grant.refusal };
  };
  const events = answerBulk(input, {
    lookup: deps.lookup,
    lang: request.lang,
    selection: request.selection,
    at: request.at,
    userAgent,
    charge,
    logError: deps.logError,
    batchSize: HTTP_BATCH_SIZE,
    idleTimeoutMs: deps.idleTimeoutMs,
    fillCaches: false,
  });
  // The first batch decides the status: errors before it are answered as errors.
  const first = await events.next();
  if (first.done) throw new BadRequestError("Empty bulk list: give at least one IP address");
  const writer = streamWriter(request.format, request.selection);
  const render = (event: IteratorResult<BulkEvent>): { text: string; last: boolean } => {
    if (event.done) return { text: writer.tail(null), last: true };
    if ("stop" in event.value) return { text: writer.tail(event.value.stop), last: true };
    return { text: writer.items(event.value.items), last: false };
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const { text, last } = render(first);
      controller.enqueue(encodeText(writer.head() + text));
      if (last) controller.close();
    },
    async pull(controller) {
      const { text, last } = render(await events.next());
      if (text !== "") controller.enqueue(encodeText(text));
      if (last) controller.close();
    },
    async cancel() {
      // The client went away: stop reading the body and looking up.
      await events.return(undefined);
    },
  });
  return streamedResponse(c, body, { "content-type": writer.contentType });
}

/**
 * Charges `units` to the caller: the one place a stream spends its budget.
 * When they do not all fit, what is left (at least one) is tried once more, so
 * that a stream uses its budget to the last unit before it stops.
 */
async function chargeUnits(deps: BulkStreamDeps, units: number): Promise<Grant> {
  const refusal = await deps.charge(units);
  if (refusal === null) return { units, refusal: null };
  if (units === 1) return { units: 0, refusal };
  // What is left, or one unit: a refusal of one unit says when the stream can resume.
  const cost = Math.min(units, Math.max(1, deps.remaining() ?? 0));
  const again = await deps.charge(cost);
  return again === null ? { units: cost, refusal: null } : { units: 0, refusal: again };
}

async function* listInput(items: string[]): AsyncGenerator<BulkInput[]> {
  yield items;
}

async function* noInput(parser: ReturnType<typeof inputParser>): AsyncGenerator<BulkInput[]> {
  const out: BulkInput[] = [];
  parser.end(out);
  if (out.length > 0) yield out;
}
