/**
 * Key drift: the answer cache's key (src/service/app/answer_key.ts) changes
 * with every input the answer depends on, one input at a time, and the cache
 * finds another entry for another data set or another second.
 */

import assert from "node:assert/strict";
import { AnswerCache } from "../../../src/service/app/answer_cache.ts";
import { answerKey, answerSecond } from "../../../src/service/app/answer_key.ts";
import { parseFieldSelection } from "../../../src/core/format/mod.ts";
import type { LookupRequest } from "../../../src/service/http/lookup_request.ts";
import type { Served } from "../../../src/service/http/env.ts";

/** The crawler a user agent claims, as the lookup reads it: only Googlebot here. */
const CLAIMS = {
  claimKey: (userAgent: string | null | undefined) =>
    userAgent?.includes("Googlebot/") ? "Google\tGooglebot" : "",
};

const BASE: LookupRequest = {
  format: "json",
  selection: null,
  lang: null,
  userAgent: "curl/8",
  at: null,
};

/** Each input the answer depends on, changed alone. */
const CHANGES: [string, string, Partial<LookupRequest>][] = [
  ["address", "81.2.69.160", {}],
  ["format", "81.2.69.142", { format: "xml" }],
  ["get", "81.2.69.142", { selection: parseFieldSelection("country") }],
  ["get (another)", "81.2.69.142", { selection: parseFieldSelection("country,city") }],
  ["lang", "81.2.69.142", { lang: "de" }],
  ["at", "81.2.69.142", { at: new Date("2026-01-01T00:00:00Z") }],
  ["user agent (shown)", "81.2.69.142", { userAgent: "Mozilla/5.0" }],
  [
    "user agent (shown by a bare name)",
    "81.2.69.142",
    { selection: parseFieldSelection("browser"), userAgent: "Mozilla/5.0" },
  ],
];

Deno.test("answerKey changes with every input the answer depends on, one at a time", () => {
  const base = answerKey("81.2.69.142", BASE, CLAIMS);
  const seen = new Set([base]);
  for (const [input, address, change] of CHANGES) {
    const key = answerKey(address, { ...BASE, ...change }, CLAIMS);
    assert.notEqual(key, base, input);
    assert.ok(!seen.has(key), `${input}: a key of its own`);
    seen.add(key);
    assert.equal(
      answerKey(address, { ...BASE, ...change }, CLAIMS),
      key,
      `${input}: the same key again`,
    );
  }
});

Deno.test("answerKey leaves out the user agent where the answer does not show it", () => {
  const country = { ...BASE, selection: parseFieldSelection("country") };
  assert.equal(
    answerKey("81.2.69.142", { ...country, userAgent: "Mozilla/5.0" }, CLAIMS),
    answerKey("81.2.69.142", country, CLAIMS),
  );
  const browser = { ...BASE, selection: parseFieldSelection("browser") };
  assert.notEqual(
    answerKey("81.2.69.142", { ...browser, userAgent: "Mozilla/5.0" }, CLAIMS),
    answerKey("81.2.69.142", browser, CLAIMS),
  );
});

Deno.test("answerSecond: the second where current_time shows (all fields, a path, the bare name), else null", () => {
  const ms = Date.UTC(2026, 0, 1, 12, 0, 0, 250);
  for (const get of [null, "timezone", "timezone.current_time", "current_time"]) {
    const selection = get === null ? null : parseFieldSelection(get);
    assert.equal(answerSecond(selection, ms), Math.floor(ms / 1000), String(get));
    assert.notEqual(answerSecond(selection, ms + 1000), answerSecond(selection, ms), String(get));
  }
  assert.equal(answerSecond(parseFieldSelection("country"), ms), null);
});

Deno.test("the answer cache finds another entry for another data set or another second", () => {
  const one = { data: {} } as Served;
  const other = { data: {} } as Served;
  const cache = new AnswerCache({ entries: 100 });
  const key = answerKey("81.2.69.142", BASE, CLAIMS);
  cache.set(one, key, "body", 100);
  assert.equal(cache.get(one, key, 100), "body");
  assert.equal(cache.get(one, key, 101), undefined, "another second");
  assert.equal(cache.get(other, key, 100), undefined, "another data set");
  cache.set(other, key, "other body", null);
  assert.equal(cache.get(other, key, null), "other body");
  assert.equal(cache.get(one, key, 100), undefined, "the data set's entries went with it");
});

Deno.test("answerKey keys the crawler claimed where only the verdict shows: every browser one entry", () => {
  const security = { ...BASE, selection: parseFieldSelection("security") };
  const chrome = answerKey(
    "66.249.66.1",
    { ...security, userAgent: "Mozilla/5.0 Chrome/120" },
    CLAIMS,
  );
  const firefox = answerKey(
    "66.249.66.1",
    { ...security, userAgent: "Mozilla/5.0 Firefox/120" },
    CLAIMS,
  );
  const bot = answerKey(
    "66.249.66.1",
    { ...security, userAgent: "Mozilla/5.0 (compatible; Googlebot/2.1)" },
    CLAIMS,
  );
  assert.equal(chrome, firefox);
  assert.notEqual(bot, chrome);
  const country = { ...BASE, selection: parseFieldSelection("country") };
  assert.equal(
    answerKey("66.249.66.1", { ...country, userAgent: "Googlebot/2.1" }, CLAIMS),
    answerKey("66.249.66.1", country, CLAIMS),
    "no verdict shown: no claim keyed",
  );
});
