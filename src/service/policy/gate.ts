/**
 * The edge gate as a server holds it: the served policy (reloaded when its
 * file changes), the per-rule counts, and one call per forward-auth request.
 */

import { DecisionCounter } from "./counter.ts";
import { authAnswer, type Decision, type DecisionData, judge } from "./decide.ts";
import { type LoadedPolicy, policyStatus, readPolicyFile, watchPolicyFile } from "./file.ts";
import { AuthResponses } from "./response.ts";

export class PolicyGate {
  #loaded: LoadedPolicy;
  #watch: { close(): void } | null = null;
  readonly counter: DecisionCounter;
  readonly #responses = new AuthResponses();

  /** `counter`: the server's shared counts (every isolate's); absent, this gate's own. */
  constructor(loaded: LoadedPolicy, counter: DecisionCounter = new DecisionCounter()) {
    this.#loaded = loaded;
    this.counter = counter;
  }

  /**
   * Reads and checks the file (throws a PolicyError, exit status 2, naming
   * the rule and the problem), then watches it every `pollMs`; `report`
   * gets the reload and refusal lines.
   */
  static async open(
    path: string,
    options: {
      report?: (line: string) => void;
      pollMs?: number;
      counter?: DecisionCounter;
    } = {},
  ): Promise<PolicyGate> {
    const gate = new PolicyGate(await readPolicyFile(path), options.counter);
    gate.#watch = watchPolicyFile(
      gate.#loaded,
      (next) => gate.#loaded = next,
      options.report ?? ((line) => console.error(line)),
      options.pollMs,
    );
    return gate;
  }

  /** The policy served now. */
  get loaded(): LoadedPolicy {
    return this.#loaded;
  }

  /**
   * Judges the client address (and the crawler its user agent claims) and counts
   * the decision (throws as judge() does).
   */
  decide(served: DecisionData, address: string, userAgent: string | null = null): Decision {
    const decision = judge(served, this.#loaded.policy, address, userAgent);
    this.counter.count(decision);
    return decision;
  }

  /** The forward-auth answer for the client address: 204 or 403, the headers, no body. */
  answer(
    served: DecisionData,
    address: string,
    userAgent: string | null = null,
  ): ReturnType<typeof authAnswer> {
    return authAnswer(this.decide(served, address, userAgent));
  }

  /**
   * The same answer as the `GET /auth` Response the route returns (its headers are
   * set after). The Responses are kept per distinct answer: X-IP-Risk names the
   * crawler, real or fake, so a claim's answer is never another's.
   */
  respond(served: DecisionData, address: string, userAgent: string | null = null): Response {
    return this.#responses.responseFor(this.decide(served, address, userAgent));
  }

  /** The `policy` part of `/status`. */
  status(): ReturnType<typeof policyStatus> {
    return policyStatus(this.#loaded);
  }

  /** Stops watching the file. */
  close(): void {
    this.#watch?.close();
  }
}
