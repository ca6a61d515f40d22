/**
 * The rules every answer passes (the instrumentation, the data set pinned,
 * CORS, RateLimit headers, HEAD, the Host check), made by factories at
 * start-up and run around each route's handler: each rule checks the request
 * before the handler (`before`: the error to answer instead, or null) and/or
 * decorates the answer after it (`after`: error answers too).
 *
 * They run as one wrapper of each registered handler, not as `app.use`
 * middleware: a route that matches one handler takes Hono's direct path (no
 * composition, and a synchronous answer stays synchronous), where each layer
 * of composition costs about a microsecond per request and an awaited promise
 * per layer (bench/middleware_bench.ts). The wrapper itself awaits only what
 * is asynchronous: a handler's pending answer, or a rule's pending decoration.
 */

import type { AppError } from "../../../base/errors.ts";
import type { AppContext } from "../env.ts";
import type { Handler } from "../route.ts";

export interface AnswerRule {
  /** Before the handler: the error to answer instead (null: go on). */
  before?(c: AppContext): AppError | null;
  /**
   * After the answer is made (`c.res`, an error's too), in the reverse order of
   * the rules; it may replace `c.res`.
   */
  after?(c: AppContext): void | Promise<void>;
}

/**
 * The wrapper of `rules`, in order. A request a rule refuses, and a handler's
 * error (thrown or rejected), are answered by `fail` (the app's error answer),
 * then decorated like any other answer.
 */
export function applyAnswerRules(
  rules: readonly AnswerRule[],
  fail: (c: AppContext, error: unknown) => Response,
): (handler: Handler) => Handler {
  const before = rules.filter((r) => r.before).map((r) => r.before!.bind(r));
  const after = rules.filter((r) => r.after).map((r) => r.after!.bind(r)).reverse();
  const decorate = (c: AppContext, from: number): Response | Promise<Response> => {
    for (let i = from; i < after.length; i++) {
      const pending = after[i]!(c);
      // A decoration that fails (a HEAD body that cannot be measured) leaves the answer as it is.
      if (pending) {
        const next = () => decorate(c, i + 1);
        return pending.then(next, next);
      }
    }
    return c.res;
  };
  const finish = (c: AppContext, response: Response) => {
    c.res = response;
    return decorate(c, 0);
  };
  return (handler) => (c) => {
    let answer: Response | Promise<Response>;
    try {
      let refusal: AppError | null = null;
      for (let i = 0; i < before.length && refusal === null; i++) refusal = before[i]!(c);
      answer = refusal === null ? handler(c) : fail(c, refusal);
    } catch (error) {
      answer = fail(c, error);
    }
    if (answer instanceof Promise) {
      return answer.then((response) => finish(c, response), (error) => finish(c, fail(c, error)));
    }
    return finish(c, answer);
  };
}
