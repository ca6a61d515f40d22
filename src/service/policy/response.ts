/**
 * The forward-auth HTTP answers as Responses. Building a Response with its
 * five headers costs more than the rest of a decision (each header is
 * validated), while the distinct answers are few (a status, a country, an AS
 * number, the flags, the rule): each is made once and cloned, which copies
 * the header list as it is.
 */

import { authAnswer, type Decision } from "./decide.ts";

/** Distinct answers kept; when full, the set starts again (a bound, not a policy). */
export const RESPONSE_CACHE_SIZE = 4096;

export class AuthResponses {
  readonly #made = new Map<string, Response>();

  /** The answer to `decision`: a new Response (204 or 403, its headers, no body). */
  responseFor(decision: Decision): Response {
    const { status, headers, body } = authAnswer(decision);
    let key = String(status);
    for (const name in headers) key += `\n${headers[name]}`;
    let made = this.#made.get(key);
    if (made === undefined) {
      if (this.#made.size >= RESPONSE_CACHE_SIZE) this.#made.clear();
      made = new Response(body, { status, headers });
      this.#made.set(key, made);
    }
    return made.clone();
  }
}
