/**
 * The one answer path of every lookup route (`/ip`, `/me`, `/`, `/bulk`,
 * `/auth`, `/asn`, and the compatible APIs' through vendorRoute): its steps
 * in one order, fixed here, so that every route refuses alike.
 *
 * 1. admission: who calls (on a keyed route the key rule has read the key
 *    before the handler, a 401; a compatible API identifies by its own
 *    credentials in `identify`);
 * 2. validation of every parameter (`read`: 400, 413, 415; a body is read here);
 * 3. the charge (`cost` units: the 429);
 * 4. the data's availability (the data set pinned for the request: the 503);
 * 5. the lookup, the render and the cache (`answer`).
 *
 * A spent key is refused (429) before a request is told the data is loading
 * (503), and a bad parameter (400) costs nothing. Synchronous unless a step is
 * not: a `GET /ip` answered at once makes no promise (bench/middleware_bench.ts).
 */

import type { AppError } from "../../base/errors.ts";
import type { AppContext, Served } from "./env.ts";
import type { Handler, RouteTools } from "./route.ts";

/** A lookup route's steps, in the order answerPath runs them. */
export interface AnswerSteps<P> {
  /** Who calls, by a compatible API's own credentials (absent: the key rule read it already). */
  identify?(c: AppContext): void;
  /** Every parameter, read and checked (a promise only where a body is read). */
  read(c: AppContext): P | Promise<P>;
  /** Units charged before the answer (0: none here; a stream charges per batch as it goes). */
  cost(p: P, c: AppContext): number;
  /** The answer from the data set pinned for the request: lookup, render, cache. */
  answer(c: AppContext, p: P, served: Served): Response | Promise<Response>;
}

/** The handler running `steps` in the one order (see the module's doc). */
export function answerPath<P>(tools: RouteTools, steps: AnswerSteps<P>): Handler {
  const { identify, read, cost, answer } = steps;
  const answered = (c: AppContext, p: P, refusal: AppError | null) => {
    if (refusal) throw refusal;
    return answer(c, p, tools.served(c));
  };
  const charged = (c: AppContext, p: P) => {
    const units = cost(p, c);
    const refusal = units > 0 ? tools.admission.charge(c, c.get("caller") ?? null, units) : null;
    return refusal instanceof Promise
      ? refusal.then((refusal) => answered(c, p, refusal))
      : answered(c, p, refusal);
  };
  return (c) => {
    identify?.(c);
    const p = read(c);
    return p instanceof Promise ? p.then((p) => charged(c, p)) : charged(c, p);
  };
}
