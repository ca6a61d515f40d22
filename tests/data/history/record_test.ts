/**
 * Recording: intervals open and close only on change, a list that kept its
 * download is not read, what ended before the kept days is forgotten, and
 * the answers of the index (networks, ranges, AS numbers, IPv6) follow.
 */

import assert from "node:assert/strict";
import { parseIp } from "../../../src/base/ip/parse.ts";
import { createHistory } from "../../../src/data/history/history.ts";
import {
  decodeHistory,
  emptyHistory,
  encodeHistory,
  type HistoryData,
} from "../../../src/data/history/history_file.ts";
import {
  advanceHistory,
  type ListContent,
  type ListState,
} from "../../../src/data/history/record.ts";
import type { RiskKind } from "../../../src/data/risk/security.ts";

const DAY = 86_400;
const T0 = Date.parse("2026-01-01T00:00:00Z") / 1000;

/** A list state whose content is read only when the run needs it (counted). */
function state(
  kind: RiskKind,
  sha256: string,
  content: Partial<ListContent>,
  reads = { count: 0 },
): ListState {
  return {
    kind,
    sha256,
    content: () => {
      reads.count++;
      return { networks: [], ranges: [], asns: [], ...content };
    },
  };
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

Deno.test("an entry costs numbers only when it enters or leaves; an unchanged download is not read", () => {
  const h = emptyHistory(365);
  const reads = { count: 0 };
  const run = (day: number, sha: string, networks: string[]) =>
    advanceHistory(
      h,
      new Map([["tor", state("tor", sha, { networks }, reads)]]),
      T0 + day * DAY,
      365,
    );

  assert.deepEqual(run(0, "a", ["1.1.1.1", "2.2.2.2"]), { entered: 2, left: 0 });
  assert.deepEqual(run(1, "a", ["ignored: same sha"]), { entered: 0, left: 0 });
  assert.equal(reads.count, 1, "the same download is not parsed again");
  assert.deepEqual(run(2, "b", ["1.1.1.1"]), { entered: 0, left: 1 });
  assert.deepEqual(run(3, "c", ["1.1.1.1", "2.2.2.2"]), { entered: 1, left: 0 });
  assert.deepEqual(h.lists.tor!.entries, { "1.1.1.1": [0], "2.2.2.2": [0, 2, 3] });
  assert.deepEqual(h.lists.tor!.installed, [0]);
  assert.equal(h.start, T0);

  const history = createHistory(decodeHistory(encodeHistory(h), "test"));
  assert.deepEqual(history.seen("tor", "1.1.1.1"), {
    firstSeen: iso(T0),
    lastSeen: iso(T0 + 3 * DAY),
  });
  assert.deepEqual(history.seen("tor", "2.2.2.2"), {
    firstSeen: iso(T0),
    lastSeen: iso(T0 + 3 * DAY),
  });
  assert.equal(history.seen("tor", "9.9.9.9"), null);
  const torAt = (day: number) =>
    history.listsAt(new Date((T0 + day * DAY) * 1000)).memberships.tor!;
  // Listed from the update that found it until the update that no longer did.
  assert.equal(torAt(1.5).has(parseIp("2.2.2.2"), null), true);
  assert.equal(torAt(2).has(parseIp("2.2.2.2"), null), false);
  assert.equal(torAt(2.9).has(parseIp("2.2.2.2"), null), false);
  assert.equal(torAt(3).has(parseIp("2.2.2.2"), null), true);
  assert.equal(
    history.listsAt(new Date((T0 - 1) * 1000)).memberships.tor,
    null,
    "before any update",
  );
});

Deno.test("a list removed from the sources closes with all its entries; kinds without a list are null", () => {
  const h = emptyHistory(365);
  advanceHistory(
    h,
    new Map([
      ["vpn", state("vpn", "v", { networks: ["10.0.0.0/8"] })],
      ["dc", state("hosting", "d", { networks: ["11.0.0.0/8"] })],
    ]),
    T0,
    365,
  );
  const changes = advanceHistory(
    h,
    new Map([["dc", state("hosting", "d", {})]]),
    T0 + DAY,
    365,
  );
  assert.deepEqual(changes, { entered: 0, left: 1 });
  assert.deepEqual(h.lists.vpn, {
    kind: "vpn",
    installed: [0, 1],
    sha256: "",
    entries: { "10.0.0.0/8": [0, 1] },
  });
  const history = createHistory(h);
  const then = history.listsAt(new Date((T0 + 60) * 1000)).memberships;
  assert.equal(then.vpn!.has(parseIp("10.1.2.3"), null), true);
  const later = history.listsAt(new Date((T0 + DAY + 60) * 1000)).memberships;
  assert.equal(later.vpn, null, "no VPN list was installed then: unknown, not false");
  assert.equal(later.tor, null);
  assert.equal(later.hosting!.has(parseIp("11.1.2.3"), null), true);
});

Deno.test("ranges, AS numbers and IPv6 networks are found as of a time, the most specific first", () => {
  const h = emptyHistory(365);
  advanceHistory(
    h,
    new Map([
      [
        "cloud",
        state("hosting", "c", {
          networks: ["2001:db8::/32", "2001:db8:1::/48"],
          ranges: [["192.0.2.10", "192.0.2.20"]],
          asns: [64501],
        }),
      ],
    ]),
    T0,
    365,
  );
  const at = history(h).listsAt(new Date((T0 + 1) * 1000)).memberships.hosting!;
  assert.deepEqual(at.matches(parseIp("2001:db8:1::5"), null), [
    { source: "cloud", network: "2001:db8:1::/48" },
    { source: "cloud", network: "2001:db8::/32" },
  ]);
  assert.deepEqual(at.matches(parseIp("192.0.2.16"), null), [
    { source: "cloud", network: "192.0.2.10-192.0.2.20" },
  ]);
  assert.equal(at.has(parseIp("192.0.2.21"), null), false);
  assert.deepEqual(at.matches(parseIp("198.51.100.1"), 64501), [
    { source: "cloud", network: "AS64501" },
  ]);
  assert.equal(at.has(parseIp("198.51.100.1"), 64502), false);
});

function history(h: HistoryData) {
  return createHistory(decodeHistory(encodeHistory(h), "test"));
}

Deno.test("what ended before the kept days is forgotten; the start moves up; runs are renumbered", () => {
  const h = emptyHistory(10);
  const run = (day: number, networks: string[]) =>
    advanceHistory(
      h,
      new Map([["t", state("threat", `s${day}`, { networks })]]),
      T0 + day * DAY,
      10,
    );
  run(0, ["1.0.0.1", "1.0.0.2"]);
  run(1, ["1.0.0.1"]); // .2 leaves on day 1
  run(5, ["1.0.0.1", "1.0.0.3"]);
  run(12, ["1.0.0.1", "1.0.0.3"]); // cutoff day 2: .2's interval (ended day 1) goes
  assert.equal(h.start, T0 + 2 * DAY);
  assert.deepEqual(Object.keys(h.lists.t!.entries).sort(), ["1.0.0.1", "1.0.0.3"]);
  assert.equal(h.runs[0], T0, "run 0 stays: 1.0.0.1 has been listed since");
  run(30, ["1.0.0.3"]); // cutoff day 20: nothing ended before it yet
  run(45, ["1.0.0.3"]); // cutoff day 35: .1 (left day 30) is forgotten
  assert.deepEqual(Object.keys(h.lists.t!.entries), ["1.0.0.3"]);
  // Before the run in effect at the cutoff (day 30), only the runs something entered at stay:
  // day 0 (the list itself) and day 5 (1.0.0.3); days 1 and 12 go.
  assert.deepEqual(h.runs, [0, 5, 30, 45].map((d) => T0 + d * DAY));
  assert.deepEqual(h.lists.t!.entries["1.0.0.3"], [1]);
  assert.deepEqual(h.lists.t!.installed, [0]);
  assert.deepEqual(history(h).seen("t", "1.0.0.3"), {
    firstSeen: iso(T0 + 5 * DAY),
    lastSeen: iso(T0 + 45 * DAY),
  });
});

Deno.test("two updates in the same second still get ordered runs", () => {
  const h = emptyHistory(365);
  advanceHistory(h, new Map([["t", state("tor", "a", { networks: ["1.1.1.1"] })]]), T0, 365);
  advanceHistory(h, new Map([["t", state("tor", "b", { networks: [] })]]), T0, 365);
  assert.deepEqual(h.runs, [T0, T0 + 1]);
  assert.deepEqual(decodeHistory(encodeHistory(h), "x").lists.t!.entries, { "1.1.1.1": [0, 1] });
});

Deno.test("a list that moves to another kind keeps its past under the old kind", () => {
  const h = emptyHistory(365);
  advanceHistory(h, new Map([["l", state("vpn", "a", { networks: ["1.1.1.1"] })]]), T0, 365);
  advanceHistory(
    h,
    new Map([["l", state("hosting", "a", { networks: ["1.1.1.1"] })]]),
    T0 + DAY,
    365,
  );
  assert.equal(h.lists["l (as vpn)"]!.kind, "vpn");
  assert.deepEqual(h.lists["l (as vpn)"]!.entries, { "1.1.1.1": [0, 1] });
  assert.deepEqual(h.lists.l!.entries, { "1.1.1.1": [1] });
  decodeHistory(encodeHistory(h), "still valid");
});

Deno.test("a file that is not a history is refused, naming what is wrong", () => {
  const bad = (value: unknown) =>
    assert.throws(
      () => decodeHistory(encodeHistory(value as HistoryData), "h.json.gz"),
      /^Error: h\.json\.gz: /,
    );
  bad({ format: "other" });
  bad({ ...emptyHistory(1), runs: [5, 5] });
  bad({
    ...emptyHistory(1),
    runs: [1],
    lists: { t: { kind: "tor", installed: [0], sha256: "", entries: { x: [0, 0] } } },
  });
  bad({
    ...emptyHistory(1),
    runs: [1],
    lists: { t: { kind: "tor", installed: [0], sha256: "", entries: { x: [3] } } },
  });
  assert.throws(() => decodeHistory(new Uint8Array([1, 2, 3]), "h"), /not a gzipped JSON file/);
});
