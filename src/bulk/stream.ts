/**
 * The streamed bulk pipeline, shared by `POST /bulk` and `ipintel lookup -`:
 * batches of input items in, batches of answered items out, in input order,
 * failed items in place. Nothing is read ahead: the next batch of input is
 * asked for only when the consumer asks for the next batch of answers, so what
 * is held at once is one input chunk and one batch of answers, whatever the
 * length of the stream.
 *
 * Each item costs one unit, charged per batch before it is looked up. When the
 * budget runs out, or the body turns out malformed, or a lookup fails
 * unexpectedly after answers were sent, the stream ends with a {@link BulkStop}
 * saying why and how many items were answered; before the first answer such
 * errors are thrown, so that the caller can still answer with a status. An
 * empty input yields nothing.
 */

import { AppError, capInput, quoteInput, RateLimitedError, STATUS_BY_CODE } from "../errors.ts";
import type { Lookup, LookupOptions } from "../lookup/lookup.ts";
import type { BulkItem, BulkStop } from "../types.ts";
import type { BulkInput } from "./input.ts";

/** What the pipeline yields: a batch of items, or the stop that ends it. */
export type BulkEvent = { items: BulkItem[] } | { stop: BulkStop };

/** Units granted of those asked for; fewer than asked comes with the refusal. */
export interface Grant {
  units: number;
  refusal: RateLimitedError | null;
}

export interface BulkOptions {
  lookup: Lookup;
  lang: string | null;
  /** The user agent for every item, read when the first batch is looked up (a body may carry it). */
  userAgent: () => string | null;
  /** Charges units to the caller (absent: unlimited). */
  charge?: (units: number) => Grant | Promise<Grant>;
  /** Where an unexpected error that ends a started stream is reported. */
  logError?: (error: unknown) => void;
  /** Items per batch (default {@link BATCH_SIZE}). */
  batchSize?: number;
  /**
   * Reports an unexpected lookup failure (a corrupt record) in place as a 500
   * item instead of ending the stream (the command line: one bad record does
   * not stop a run).
   */
  failInPlace?: boolean;
}

/**
 * Items looked up and charged at once: large enough that the per-batch cost
 * (a charge, a chunk to the socket) is small beside the lookups, small enough
 * that a batch of full answers stays near 256 KB.
 */
export const BATCH_SIZE = 256;

/** Answers the items of `input` batch by batch; see the module comment for errors. */
export async function* answerBulk(
  input: AsyncIterable<BulkInput[]>,
  options: BulkOptions,
): AsyncGenerator<BulkEvent> {
  const batchSize = options.batchSize ?? BATCH_SIZE;
  let answered = 0;
  let lookupOptions: LookupOptions | null = null;
  const source = input[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await source.next();
      if (next.done) break;
      const items = next.value;
      for (let from = 0; from < items.length;) {
        const batch = items.slice(from, from + batchSize);
        const grant = options.charge ? await options.charge(batch.length) : null;
        // Fewer units than asked without a refusal: the rest of the batch is charged next.
        const granted = grant ? Math.min(grant.units, batch.length) : batch.length;
        from += granted;
        lookupOptions ??= { userAgent: options.userAgent(), lang: options.lang };
        const out = new Array<BulkItem>(granted);
        for (let i = 0; i < granted; i++) {
          out[i] = options.failInPlace
            ? lookupOrReport(batch[i]!, lookupOptions, options.lookup)
            : lookupItem(batch[i]!, lookupOptions, options.lookup);
        }
        if (granted > 0) {
          answered += granted;
          yield { items: out };
        }
        if (grant?.refusal || granted === 0) {
          const refusal = grant?.refusal ?? new RateLimitedError("Rate limit exceeded", 1);
          if (answered === 0) throw refusal;
          yield { stop: rateStop(refusal, answered) };
          return;
        }
      }
    }
  } catch (error) {
    if (answered === 0) throw error;
    if (!(error instanceof AppError)) options.logError?.(error);
    yield { stop: errorStop(error, answered) };
    return;
  } finally {
    await source.return?.();
  }
}

/**
 * One bulk item: a result, or the failure in place (an invalid address, one
 * without data, an input line that is not an address); other errors (a bad
 * `lang`, a corrupt record) are thrown: they fail the whole call.
 */
export function lookupItem(item: BulkInput, options: LookupOptions, lookup: Lookup): BulkItem {
  if (typeof item !== "string") return item;
  try {
    return lookup(item, options);
  } catch (error) {
    if (
      error instanceof AppError && (error.code === "invalid_ip" || error.code === "not_found")
    ) {
      // The input as given, capped: an item never grows with the request.
      return {
        ip: capInput(item),
        error: { status: STATUS_BY_CODE[error.code], message: error.message },
      };
    }
    throw error;
  }
}

/** lookupItem, with unexpected failures in place too (errors of the request itself still throw). */
function lookupOrReport(item: BulkInput, options: LookupOptions, lookup: Lookup): BulkItem {
  try {
    return lookupItem(item, options, lookup);
  } catch (error) {
    if (error instanceof AppError || typeof item !== "string") throw error;
    const reason = error instanceof Error ? error.message : String(error);
    return {
      ip: capInput(item),
      error: { status: 500, message: `Lookup of ${quoteInput(item)} failed: ${reason}` },
    };
  }
}

function rateStop(refusal: RateLimitedError, answered: number): BulkStop {
  const retry = Number.isFinite(refusal.retryAfterSeconds) ? refusal.retryAfterSeconds : null;
  return {
    status: 429,
    message: `${refusal.message}: ${answered} ${
      answered === 1 ? "address" : "addresses"
    } answered, send the rest from address ${answered + 1}`,
    answered,
    retryAfter: retry,
  };
}

function errorStop(error: unknown, answered: number): BulkStop {
  const known = error instanceof AppError;
  const message = known ? error.message : "Internal server error";
  return {
    status: known ? STATUS_BY_CODE[error.code] : 500,
    message: `${message}: ${answered} ${
      answered === 1 ? "address" : "addresses"
    } answered before it`,
    answered,
    retryAfter: null,
  };
}
