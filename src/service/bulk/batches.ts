/**
 * The streamed bulk pipeline, shared by `POST /bulk` and `ipintel lookup -`:
 * batches of input items in, batches of answered items out, in input order,
 * failed items in place. No answer is made ahead: the next batch is looked up
 * only when the consumer asks for it, so what is held at once is one batch of
 * answers, whatever the length of the stream. (The body itself is read ahead,
 * compactly, by src/service/bulk/read_ahead.ts: a client may send it all first.)
 *
 * With an idle timeout, a stream that neither reads a byte of its body nor
 * has an answer taken for that long ends with a stop (status 408) saying how
 * many items were answered: a stalled upload gets it at once, a client that
 * stopped reading gets it when it reads again (its body is released at the
 * timeout).
 *
 * Each item costs one unit, charged per batch before it is looked up. When the
 * budget runs out, or the body turns out malformed, or a lookup fails
 * unexpectedly after answers were sent, the stream ends with a {@link BulkStop}
 * saying why and how many items were answered; before the first answer such
 * errors are thrown, so that the caller can still answer with a status. An
 * empty input yields nothing.
 */

import {
  AppError,
  BadRequestError,
  capInput,
  quoteInput,
  RateLimitedError,
  STATUS_BY_CODE,
} from "../../base/errors.ts";
import type { Lookup, LookupOptions } from "../../core/lookup/lookup.ts";
import { lookupItem as coreLookupItem } from "../../core/lookup/item.ts";
import type { BulkItem, BulkStop } from "../../base/types.ts";
import type { BulkInput, InputProgress } from "./input.ts";

/** What the pipeline yields: a batch of items, or the stop that ends it. */
export type BulkEvent = { items: BulkItem[] } | { stop: BulkStop };

/**
 * Units granted of those asked for; fewer than asked comes with the refusal:
 * a 429 (the budget is spent) or a 401 (the key was revoked or rotated while
 * the stream ran).
 */
export interface Grant {
  units: number;
  refusal: AppError | null;
}

export interface BulkOptions {
  lookup: Lookup;
  lang: string | null;
  /** The `get` selection: the opt-in groups (`risk`, `network`) are computed only when named. */
  selection?: LookupOptions["selection"];
  /** Answer `security` and `risk` from the lists as they stood at this time (src/data/history). */
  at?: Date | null;
  /** The user agent for every item, read when the first batch is looked up (a body may carry it). */
  userAgent: () => string | null;
  /** Charges units to the caller (absent: unlimited). */
  charge?: (units: number) => Grant | Promise<Grant>;
  /** Where an unexpected error that ends a started stream is reported. */
  logError?: (error: unknown) => void;
  /** Items per batch (default {@link BATCH_SIZE}). */
  batchSize?: number;
  /**
   * False: the records the items' lookups decode are not kept in the record
   * caches (see the lookup's withoutCacheFills). A server's streamed answer, whose addresses
   * are mostly met once; `lookup -` keeps them (its own process, its own cache).
   */
  fillCaches?: boolean;
  /**
   * Reports an unexpected lookup failure (a corrupt record) in place as a 500
   * item instead of ending the stream (the command line: one bad record does
   * not stop a run).
   */
  failInPlace?: boolean;
  /**
   * Milliseconds without a byte of the body read nor a batch taken after which
   * the stream ends with its stop (absent or 0: never). The body's progress is
   * read from the input's `lastReadAt` (readInput's), else from its batches.
   */
  idleTimeoutMs?: number;
}

/** Thrown when the body gave nothing for the idle timeout before the first answer. */
export class IdleBodyError extends BadRequestError {
  constructor(seconds: number) {
    super(`The request body sent nothing for ${seconds} s: no address answered`);
  }
}

/**
 * Items looked up and charged at once: large enough that the per-batch cost
 * (a charge, a chunk to the socket) is small beside the lookups, small enough
 * that a batch of full answers stays near 256 KB.
 */
export const BATCH_SIZE = 256;

/** Answers the items of `input` batch by batch; see the module comment for errors. */
export async function* answerBulk(
  input: AsyncIterable<BulkInput[]> & Partial<InputProgress>,
  options: BulkOptions,
): AsyncGenerator<BulkEvent> {
  const batchSize = options.batchSize ?? BATCH_SIZE;
  const idleMs = options.idleTimeoutMs ?? 0;
  let answered = 0;
  let lookupOptions: LookupOptions | null = null;
  const source = input[Symbol.asyncIterator]();
  /** When the stream last moved: a batch taken by the consumer, or input that arrived. */
  let movedAt = performance.now();
  const lastMoved = () => Math.max(movedAt, input.lastReadAt ?? 0);
  /** Set while the consumer holds a batch and neither side moves for idleMs. */
  let expired = false;
  let unwatch = () => {};
  const idleStop = () => ({ stop: idleStopOf(idleMs, answered) });
  try {
    for (;;) {
      const next = idleMs > 0
        ? await untilIdle(source.next(), lastMoved, idleMs)
        : await source.next();
      if (next === IDLE) {
        await input.cancel?.();
        if (answered === 0) throw new IdleBodyError(idleMs / 1000);
        yield idleStop();
        return;
      }
      if (next.done) break;
      movedAt = performance.now();
      const items = next.value;
      for (let from = 0; from < items.length;) {
        // Past the first batch, the input says when an answer may go (see readInput).
        if (answered > 0) await input.answerable?.();
        const batch = items.slice(from, from + batchSize);
        const grant = options.charge ? await options.charge(batch.length) : null;
        // Fewer units than asked without a refusal: the rest of the batch is charged next.
        const granted = grant ? Math.min(grant.units, batch.length) : batch.length;
        from += granted;
        lookupOptions ??= {
          userAgent: options.userAgent(),
          lang: options.lang,
          selection: options.selection,
          at: options.at,
        };
        const out = new Array<BulkItem>(granted);
        const lookUp = () => {
          for (let i = 0; i < granted; i++) {
            out[i] = options.failInPlace
              ? lookupOrReport(batch[i]!, lookupOptions!, options.lookup)
              : lookupItem(batch[i]!, lookupOptions!, options.lookup);
          }
        };
        if (options.fillCaches === false) {
          options.lookup.withoutCacheFills(lookUp);
        } else lookUp();
        if (granted > 0) {
          answered += granted;
          if (idleMs > 0) {
            // The consumer holds this batch until its client reads: watch that it does.
            const heldFrom = performance.now();
            unwatch = whenIdle(() => Math.max(heldFrom, input.lastReadAt ?? 0), idleMs, () => {
              expired = true;
              input.cancel?.().catch(() => {}); // the body and its read-ahead are let go now
            });
          }
          yield { items: out };
          unwatch();
          movedAt = performance.now();
          if (expired) {
            yield idleStop();
            return;
          }
        }
        if (grant?.refusal || granted === 0) {
          const refusal = grant?.refusal ?? new RateLimitedError("Rate limit exceeded", 1);
          if (answered === 0) throw refusal;
          yield { stop: refusalStop(refusal, answered) };
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
    unwatch();
    await source.return?.();
  }
}

const IDLE = Symbol("idle");

/**
 * `promise`'s outcome, or IDLE once `lastMoved()` is `idleMs` old first (the
 * timer re-arms for what is left while the input keeps moving).
 */
function untilIdle<T>(
  promise: Promise<T>,
  lastMoved: () => number,
  idleMs: number,
): Promise<T | typeof IDLE> {
  return new Promise((resolve, reject) => {
    const unwatch = whenIdle(lastMoved, idleMs, () => resolve(IDLE));
    promise.then(
      (value) => (unwatch(), resolve(value)),
      (error) => (unwatch(), reject(error)),
    );
  });
}

/** Calls `then` once `lastMoved()` is `idleMs` old, re-arming while it moves; returns the cancel. */
function whenIdle(lastMoved: () => number, idleMs: number, then: () => void): () => void {
  const left = () => lastMoved() + idleMs - performance.now();
  const check = () => {
    if (left() <= 0) then();
    else timer = setTimeout(check, Math.ceil(left()));
  };
  let timer = setTimeout(check, Math.max(0, Math.ceil(left())));
  return () => clearTimeout(timer);
}
/**
 * One bulk item: a result, or the failure in place (an invalid address, one
 * without data, an input line that is not an address); other errors (a bad
 * `lang`, a corrupt record) are thrown: they fail the whole call. An address
 * is looked up by the core's one item lookup (src/core/lookup/item.ts).
 */
export function lookupItem(
  item: BulkInput,
  options: LookupOptions,
  lookup: Lookup,
): BulkItem {
  if (typeof item !== "string") return item;
  return coreLookupItem(lookup, item, options);
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

function refusalStop(refusal: AppError, answered: number): BulkStop {
  const retry = refusal instanceof RateLimitedError && Number.isFinite(refusal.retryAfterSeconds)
    ? refusal.retryAfterSeconds
    : null;
  return {
    status: STATUS_BY_CODE[refusal.code],
    message: `${refusal.message}: ${answered} ${
      answered === 1 ? "address" : "addresses"
    } answered, send the rest from address ${answered + 1}`,
    answered,
    retryAfter: retry,
  };
}

function idleStopOf(idleMs: number, answered: number): BulkStop {
  return {
    status: 408,
    message: `Nothing read or written for ${idleMs / 1000} s: ${answered} ${
      answered === 1 ? "address" : "addresses"
    } answered, send the rest from address ${answered + 1}`,
    answered,
    retryAfter: null,
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
