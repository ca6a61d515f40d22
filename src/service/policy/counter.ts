/**
 * Decisions counted per rule and verdict, for `/metrics` as
 * `ipintel_policy_decisions_total{rule="no-tor",action="deny"} 3`.
 *
 * The counts live in one SharedArrayBuffer that every isolate of a server
 * (the workers of IPINTEL_WORKERS) counts into, like src/service/ops/metrics.ts: each
 * isolate writes only its own cells, so no count is lost without atomics, and
 * any isolate's scrape sums them all. Rule names are claimed in a shared table
 * (rule names are at most 64 ASCII characters: src/service/policy/policy.ts); a name
 * keeps its slot after a reload drops the rule (counters never go down).
 */

import type { Decision } from "./decide.ts";
import type { RuleAction } from "./policy.ts";

export const POLICY_METRIC = "ipintel_policy_decisions_total";

export type DecisionCounts = Record<RuleAction, number>;

const ACTIONS = ["allow", "deny", "report"] as const satisfies readonly RuleAction[];
/** Distinct rule names a server can count (over every reload); the last slot takes any more. */
export const RULE_SLOTS = 1024;
const NAME_BYTES = 64;
const OVERFLOW_NAME = "(more rules than counted)";
const EMPTY = 0;
const CLAIMING = 1;
const READY = 2;

/** Room for the counts of `isolates` isolates (about 100 KB for two). */
export function decisionCountsBuffer(isolates: number): SharedArrayBuffer {
  return new SharedArrayBuffer(layout(isolates).bytes);
}

function layout(isolates: number) {
  const states = 0; // Int32 per slot: EMPTY, CLAIMING, READY
  const lengths = states + RULE_SLOTS * 4; // Int32 per slot: the name's length
  const names = lengths + RULE_SLOTS * 4; // NAME_BYTES per slot
  const counts = names + RULE_SLOTS * NAME_BYTES; // Float64 per slot, isolate and action
  return { states, lengths, names, counts, bytes: counts + RULE_SLOTS * isolates * 3 * 8 };
}

export class DecisionCounter {
  readonly #states: Int32Array;
  readonly #lengths: Int32Array;
  readonly #names: Uint8Array;
  readonly #counts: Float64Array;
  readonly #isolates: number;
  readonly #slice: number;
  /** This isolate's slots by name (a name never moves once claimed). */
  readonly #slots = new Map<string, number>();

  /**
   * @param shared the server's buffer (decisionCountsBuffer) and this isolate's
   * slice in it; absent: counts of this isolate alone.
   */
  constructor(shared?: { buffer: SharedArrayBuffer; isolates: number; slice: number }) {
    const isolates = shared?.isolates ?? 1;
    const buffer = shared?.buffer ?? decisionCountsBuffer(1);
    const at = layout(isolates);
    if (buffer.byteLength !== at.bytes) {
      throw new Error(
        `The decision counts buffer holds ${buffer.byteLength} bytes, not ${at.bytes}`,
      );
    }
    this.#states = new Int32Array(buffer, at.states, RULE_SLOTS);
    this.#lengths = new Int32Array(buffer, at.lengths, RULE_SLOTS);
    this.#names = new Uint8Array(buffer, at.names, RULE_SLOTS * NAME_BYTES);
    this.#counts = new Float64Array(buffer, at.counts, RULE_SLOTS * isolates * 3);
    this.#isolates = isolates;
    this.#slice = shared?.slice ?? 0;
  }

  count(decision: Pick<Decision, "rule" | "verdict">): void {
    let slot = this.#slots.get(decision.rule);
    if (slot === undefined) {
      slot = this.#claim(decision.rule);
      this.#slots.set(decision.rule, slot);
    }
    this.#counts[(slot * this.#isolates + this.#slice) * 3 + ACTIONS.indexOf(decision.verdict)]!++;
  }

  /** Every isolate's counts summed, by rule name. */
  snapshot(): Map<string, DecisionCounts> {
    const byRule = new Map<string, DecisionCounts>();
    for (let slot = 0; slot < RULE_SLOTS; slot++) {
      if (Atomics.load(this.#states, slot) !== READY) continue;
      const counts = { allow: 0, deny: 0, report: 0 };
      for (let isolate = 0; isolate < this.#isolates; isolate++) {
        const at = (slot * this.#isolates + isolate) * 3;
        counts.allow += this.#counts[at]!;
        counts.deny += this.#counts[at + 1]!;
        counts.report += this.#counts[at + 2]!;
      }
      byRule.set(this.#nameAt(slot), counts);
    }
    return byRule;
  }

  /** The Prometheus text (HELP, TYPE, one line per rule and action counted); empty before any decision. */
  render(): string {
    return renderDecisionCounts(this.snapshot());
  }

  /** The slot holding `name`, claimed in the shared table when no isolate has yet. */
  #claim(name: string): number {
    const bytes = new TextEncoder().encode(name).subarray(0, NAME_BYTES);
    for (let slot = 0; slot < RULE_SLOTS - 1; slot++) {
      let state = Atomics.load(this.#states, slot);
      if (state === EMPTY) {
        state = Atomics.compareExchange(this.#states, slot, EMPTY, CLAIMING);
        if (state === EMPTY) {
          this.#names.set(bytes, slot * NAME_BYTES);
          Atomics.store(this.#lengths, slot, bytes.length);
          Atomics.store(this.#states, slot, READY);
          return slot;
        }
      }
      // Another isolate is writing a name here: a few bytes, done at once.
      while (state === CLAIMING) state = Atomics.load(this.#states, slot);
      if (this.#holds(slot, bytes)) return slot;
    }
    return this.#overflow();
  }

  #overflow(): number {
    const slot = RULE_SLOTS - 1;
    if (Atomics.compareExchange(this.#states, slot, EMPTY, CLAIMING) === EMPTY) {
      const bytes = new TextEncoder().encode(OVERFLOW_NAME);
      this.#names.set(bytes, slot * NAME_BYTES);
      Atomics.store(this.#lengths, slot, bytes.length);
      Atomics.store(this.#states, slot, READY);
    }
    return slot;
  }

  /** True when the slot's name is `bytes` (compared in place: no text made per slot). */
  #holds(slot: number, bytes: Uint8Array): boolean {
    if (Atomics.load(this.#lengths, slot) !== bytes.length) return false;
    const start = slot * NAME_BYTES;
    for (let i = 0; i < bytes.length; i++) if (this.#names[start + i] !== bytes[i]) return false;
    return true;
  }

  #nameAt(slot: number): string {
    const start = slot * NAME_BYTES;
    // Copied out: TextDecoder does not read shared memory.
    return new TextDecoder().decode(
      this.#names.slice(start, start + Atomics.load(this.#lengths, slot)),
    );
  }
}

/**
 * Prometheus lines for counts, sorted by rule; only the actions a rule has
 * taken are listed.
 */
export function renderDecisionCounts(byRule: ReadonlyMap<string, DecisionCounts>): string {
  if (byRule.size === 0) return "";
  const lines = [
    `# HELP ${POLICY_METRIC} Forward-auth decisions (GET /auth), by deciding rule and its action.`,
    `# TYPE ${POLICY_METRIC} counter`,
  ];
  for (const [rule, counts] of [...byRule].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    for (const action of ACTIONS) {
      if (counts[action] === 0) continue;
      lines.push(
        `${POLICY_METRIC}{rule="${escapeLabel(rule)}",action="${action}"} ${counts[action]}`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

/** Label values escape backslash, quote and newline (rule names are plain, but the format demands it). */
function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => c === "\n" ? "\\n" : `\\${c}`);
}
