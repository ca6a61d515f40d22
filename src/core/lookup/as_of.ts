/**
 * Answers as of a past time (`at`): the security sources become the lists as
 * they stood then (src/data/history); location, time zone and connection (ASN)
 * stay the current data's, and the `security` group says both.
 */

import { checkAt } from "../../data/history/at.ts";
import {
  createRiskSource,
  NO_FEEDS,
  type RiskSource,
  type SourceFacts,
} from "../../data/risk/security.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import type { Security } from "../../base/types.ts";

/** What `security` carries besides its flags when `at` is given. */
export const AS_OF_NOTE =
  "isVpn, isTor and isThreat (and risk) are the security lists as they stood at asOf; geoLocation, timezone, flag, currency and connection (ASN) are from the current data";

/** The `security` group of an answer as of `asOf`: the flags, the time, and what the time covers. */
export function securityAsOf(security: Security, asOf: string): Security {
  const stamped = { ...security, asOf, note: AS_OF_NOTE };
  return stamped;
}

/**
 * The security sources as of a time, for a data set: checks the time against
 * the kept history (422 before it starts, 400 in the future), then reads the
 * lists of then. The Anonymous-IP database keeps no history: it is left out.
 * The last few times asked are remembered (a bulk list asks the same one).
 */
export function createAsOf(
  data: DataSet,
  now: () => Date,
): (at: Date) => { risk: RiskSource; asOf: string } {
  // The lists of each recorded update asked for: times within one update share them.
  const byRun = new Map<number, { lists: RiskSource; empty: boolean }>();
  // The last time asked, and its answer: a log's lines repeat their second.
  let lastTime = NaN;
  let last: { risk: RiskSource; asOf: string } | null = null;
  return (at) => {
    if (at.getTime() === lastTime && last !== null) return last;
    checkAt(data.history, at, now());
    const history = data.history!;
    const run = history.runAt(at);
    let found = byRun.get(run);
    if (!found) {
      const { memberships, providers } = history.listsAt(at);
      const facts = new Map<string, SourceFacts>(
        [...providers].map(([name, provider]) => [name, { dataDate: null, provider }]),
      );
      const lists = createRiskSource({
        ...memberships,
        anonymousIp: null,
        facts,
        seen: history.seen,
      });
      found = { lists, empty: lists === NO_FEEDS };
      if (byRun.size >= RUN_LIMIT) byRun.clear();
      byRun.set(run, found);
    }
    const { lists, empty } = found;
    const asOf = at.toISOString();
    const risk: RiskSource = {
      signals: lists.signals,
      explain: (ip, asn, verdict) => ({
        ...lists.explain(ip, asn, verdict),
        asOf,
        ...(empty ? { reason: `unknown: no security list was installed at ${asOf}` } : {}),
      }),
    };
    lastTime = at.getTime();
    return last = { risk, asOf };
  };
}

/** Updates whose lists are kept at once (a log spans a few; a month of hourly updates, 720). */
const RUN_LIMIT = 1024;
