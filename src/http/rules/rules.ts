/**
 * The rules every answer passes, run as one Hono middleware: each rule checks
 * the request before its route (`before`: the error to answer instead, or
 * null) and/or decorates the answer after it (`after`: the error answers
 * too). One layer, not one middleware each: every layer of Hono's composition
 * costs a few thousand instructions per request (bench/middleware_bench.ts),
 * more than these rules themselves.
 */

import type { MiddlewareHandler } from "hono";
import type { AppError } from "../../errors.ts";
import type { AppContext, AppEnv } from "../env.ts";

export interface AnswerRule {
  /** Before the route: the error to answer instead (null: go on). */
  before?(c: AppContext): AppError | null;
  /** After the answer is made (an error's too), in the reverse order of the rules. */
  after?(c: AppContext): void | Promise<void>;
}

/**
 * The middleware of `rules`, in order; a refused request is answered by
 * `refuse` (the app's error answer), then decorated like any other.
 */
export function answerRules(
  rules: readonly AnswerRule[],
  refuse: (c: AppContext, error: AppError) => Response,
): MiddlewareHandler<AppEnv> {
  const before = rules.filter((r) => r.before).map((r) => r.before!.bind(r));
  const after = rules.filter((r) => r.after).map((r) => r.after!.bind(r)).reverse();
  return async (c, next) => {
    let refusal: AppError | null = null;
    for (let i = 0; i < before.length && refusal === null; i++) refusal = before[i]!(c);
    if (refusal === null) await next();
    else c.res = refuse(c, refusal);
    for (const decorate of after) {
      const pending = decorate(c);
      if (pending) await pending;
    }
  };
}
