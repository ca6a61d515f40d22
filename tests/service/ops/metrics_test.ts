import assert from "node:assert/strict";
import { AccessControl } from "../../../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../../../src/service/keys_limits/rate_limiter.ts";
import { MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";
import { DURATION_BUCKETS, Metrics } from "../../../src/service/ops/metrics.ts";
import { ROUTE_LABELS } from "../../../src/service/app/app.ts";
import { FIXED_NOW, fixtureDataSet, fixtureLookup, writeFixtureDataDir } from "../../_helpers.ts";
import { servedOf } from "../../../src/service/http/env.ts";
import { Lookup } from "../../../src/core/lookup/lookup.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { parsePrometheus, type Sample, sampleValue, testServer } from "./_server.ts";
import { pythonWith } from "../../_python.ts";
import { ignoredName } from "../../_skip.ts";

const scrape = async (t: Awaited<ReturnType<typeof testServer>>, headers: HeadersInit = {}) => {
  const response = await t.request("/metrics", { headers });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return { text: await response.clone().text(), samples: parsePrometheus(await response.text()) };
};

const requests = (samples: Sample[], method: string, route: string, status: number) =>
  sampleValue(samples, "ipintel_http_requests_total", { method, route, status: String(status) });

Deno.test("/metrics counts known requests by method, route pattern and status", async () => {
  const t = await testServer({ log: "off" });
  const sent: [string, RequestInit?][] = [
    ["/ip/81.2.69.142"], // fast path
    ["/ip/81.2.69.142"],
    ["/ip/81.2.69.142"],
    ["/ip/81.2.69.142?apiKey=k-123&format=xml"], // the app
    ["/ip/1.2.3"], // 404 invalid
    ["/bulk/81.2.69.142,9.9.9.9"],
    ["/bulk", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ips: ["2a02:ec0::1"] }),
    }],
    ["/no/such/route"],
    ["/health"],
  ];
  for (const [path, init] of sent) await (await t.request(path, init)).body?.cancel();
  const { text, samples } = await scrape(t);

  assert.equal(requests(samples, "GET", "/ip/{ip}", 200), 4);
  assert.equal(requests(samples, "GET", "/ip/{ip}", 404), 1);
  assert.equal(requests(samples, "GET", "/bulk/{ip_list}", 200), 1);
  assert.equal(requests(samples, "POST", "/bulk", 200), 1);
  assert.equal(requests(samples, "GET", "unmatched", 404), 1);
  assert.equal(requests(samples, "GET", "/health", 200), 1);
  const total = samples.filter((s) => s.name === "ipintel_http_requests_total")
    .reduce((sum, s) => sum + s.value, 0);
  assert.equal(total, sent.length, "the scrape itself is counted after it is answered");
  // Labels hold route patterns only: no address, no query, no key.
  assert.doesNotMatch(text, /81\.2\.69|apiKey|k-123|no\/such/);

  // Found addresses: 4 single lookups, 2 bulk items, 1 POST item (the invalid one finds nothing).
  assert.equal(sampleValue(samples, "ipintel_lookups_total"), 7);
  assert.equal(sampleValue(samples, "ipintel_rate_limited_total"), 0);
  // The repeated /ip answers came from the cache of rendered answers (the same second or not:
  // at least one repeat of the three plain ones was a hit), the others were made and kept.
  assert.ok(sampleValue(samples, "ipintel_answer_cache_hits_total")! >= 1);
  assert.ok(sampleValue(samples, "ipintel_answer_cache_misses_total")! >= 2);
  assert.ok(sampleValue(samples, "ipintel_answer_cache_bytes")! > 0);
});

Deno.test("the latency histogram is cumulative per route, +Inf equal to the count", async () => {
  const t = await testServer({ log: "off" });
  for (let i = 0; i < 5; i++) await (await t.request("/ip/81.2.69.142")).text();
  const { samples } = await scrape(t);
  const buckets = samples.filter((s) =>
    s.name === "ipintel_http_request_duration_seconds_bucket" && s.labels.route === "/ip/{ip}"
  );
  assert.deepEqual(buckets.map((b) => b.labels.le), [...DURATION_BUCKETS.map(String), "+Inf"]);
  for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]!.value >= buckets[i - 1]!.value);
  const count = sampleValue(samples, "ipintel_http_request_duration_seconds_count", {
    route: "/ip/{ip}",
  });
  assert.equal(count, 5);
  assert.equal(buckets.at(-1)!.value, 5);
  const sum = sampleValue(samples, "ipintel_http_request_duration_seconds_sum", {
    route: "/ip/{ip}",
  })!;
  assert.ok(sum > 0 && sum < 5, `sum ${sum}`);
});

Deno.test("429s are counted as rate-limited requests, on the fast path and the app", async () => {
  const keys = new KeyTable(new MemoryKeyStore());
  await keys.refresh();
  const limiter = new RateLimiter({ counters: new MemoryRateCounters() });
  const access = new AccessControl(
    { auth: "optional", rateLimit: 10, rateWindow: 60, anonRateLimit: 2 },
    keys,
    limiter,
  );
  const t = await testServer({ log: "off" }, { access });
  const statuses: number[] = [];
  for (const path of ["/ip/81.2.69.142", "/ip/81.2.69.142", "/ip/81.2.69.142", "/me"]) {
    const response = await t.request(path);
    statuses.push(response.status);
    await response.body?.cancel();
  }
  assert.deepEqual(statuses, [200, 200, 429, 429]);
  const { samples } = await scrape(t);
  assert.equal(sampleValue(samples, "ipintel_rate_limited_total"), 2);
  assert.equal(requests(samples, "GET", "/ip/{ip}", 429), 1);
  assert.equal(requests(samples, "GET", "/me", 429), 1);
  await limiter.close();
});

Deno.test("/metrics reports each data file's build time, reloads and record-cache counts", async () => {
  const t = await testServer({ log: "off" });
  for (const ip of ["81.2.69.142", "81.2.69.142", "2a02:ec0::1"]) {
    await (await t.request(`/ip/${ip}?format=csv`)).text();
  }
  let { samples } = await scrape(t);
  const built = FIXED_NOW.getTime() / 1000;
  assert.equal(
    sampleValue(samples, "ipintel_data_build_timestamp_seconds", { kind: "city" }),
    built,
  );
  assert.equal(
    sampleValue(samples, "ipintel_data_build_timestamp_seconds", { kind: "asn" }),
    built,
  );
  const cache = (what: string, kind: string) =>
    sampleValue(samples, `ipintel_cache_${what}_total`, { cache: kind })!;
  // Two distinct City records: missed once each; the repeated address then hits.
  assert.ok(cache("misses", "city") >= 2, `misses ${cache("misses", "city")}`);
  assert.ok(cache("hits", "city") >= 1, `hits ${cache("hits", "city")}`);
  const before = { hits: cache("hits", "city"), misses: cache("misses", "city") };
  assert.equal(sampleValue(samples, "ipintel_data_reloads_total", { result: "success" }), 0);

  // A reload: a new data set with empty caches; the totals never go down.
  t.server.install(servedOf(await openDataSet(await writeFixtureDataDir()), await fixtureLookup()));
  t.server.metrics.recordReload("success");
  t.server.metrics.recordReload("failure");
  ({ samples } = await scrape(t));
  assert.ok(cache("hits", "city") >= before.hits);
  assert.ok(cache("misses", "city") >= before.misses);
  assert.equal(sampleValue(samples, "ipintel_data_reloads_total", { result: "success" }), 1);
  assert.equal(sampleValue(samples, "ipintel_data_reloads_total", { result: "failure" }), 1);
});

Deno.test("with IPINTEL_METRICS_TOKEN, /metrics answers only Authorization: Bearer <token>", async () => {
  const token = "metrics-token-0123456789";
  const t = await testServer({ log: "off", metricsToken: token });
  for (
    const headers of <Record<string, string>[]> [{}, {
      authorization: "Bearer wrong-token-0123456789",
    }, {
      "x-api-key": token,
    }]
  ) {
    const response = await t.request("/metrics", { headers });
    assert.equal(response.status, 401, JSON.stringify(headers));
    assert.equal(response.headers.get("www-authenticate"), 'Bearer realm="metrics"');
    assert.match((await response.json()).message, /metrics token/);
  }
  const { samples } = await scrape(t, { authorization: `Bearer ${token}` });
  assert.equal(requests(samples, "GET", "/metrics", 401), 3);
});

Deno.test("IPINTEL_METRICS=false: /metrics is not served and requests still answer", async () => {
  const t = await testServer({ log: "off", metrics: false });
  const lookup = await t.request("/ip/81.2.69.142");
  assert.equal(lookup.status, 200);
  assert.equal((await lookup.json()).data.ip, "81.2.69.142");
  const metrics = await t.request("/metrics");
  assert.equal(metrics.status, 404);
  await metrics.body?.cancel();
  // The counters were never touched: the render (as a scrape would see it) counts nothing.
  const samples = parsePrometheus(t.server.metrics.render());
  assert.equal(sampleValue(samples, "ipintel_lookups_total"), 0);
  assert.equal(samples.filter((s) => s.name === "ipintel_http_requests_total").length, 0);
});

const PROMETHEUS_PYTHON = await pythonWith("import prometheus_client.parser");
const PROMETHEUS_TEST = ignoredName(
  "the exposition parses with the Prometheus Python client (independent check)",
  PROMETHEUS_PYTHON
    ? null
    : "no python3 with prometheus_client (apt install python3-prometheus-client)",
);

Deno.test(PROMETHEUS_TEST, { ignore: !PROMETHEUS_PYTHON }, async () => {
  const python = PROMETHEUS_PYTHON!;
  const t = await testServer({ log: "off" });
  await (await t.request("/ip/81.2.69.142")).text();
  await (await t.request("/ip/nope")).text();
  const { text, samples } = await scrape(t);
  const script = `
import sys, json
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        out.append([s.name, s.labels, s.value])
print(json.dumps(out))
`;
  const child = new Deno.Command(python, {
    args: ["-c", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const output = await child.output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  const theirs = JSON.parse(new TextDecoder().decode(output.stdout)) as [
    string,
    Record<string, string>,
    number,
  ][];
  assert.deepEqual(
    theirs.map(([name, labels, value]) => ({ name, labels, value })),
    samples,
  );
});

Deno.test("/metrics reports each source's data date and whether each configured source is present", async () => {
  const t = await testServer({ log: "off" });
  const data = await fixtureDataSet();
  t.server.install(
    servedOf(
      { ...data, absent: [{ name: "tor-exits", kind: "tor", reason: "offline" }] },
      await fixtureLookup(),
    ),
  );
  const { samples } = await scrape(t);
  const city = data.installed.find((s) => s.kind === "city")!;
  assert.ok(city.dataDate);
  assert.equal(
    sampleValue(samples, "ipintel_source_data_timestamp_seconds", {
      source: city.name,
      kind: "city",
    }),
    Date.parse(city.dataDate) / 1000,
  );
  assert.equal(
    sampleValue(samples, "ipintel_source_present", { source: city.name, kind: "city" }),
    1,
  );
  assert.equal(
    sampleValue(samples, "ipintel_source_present", { source: "tor-exits", kind: "tor" }),
    0,
  );
});

Deno.test("counted lookups keep every capability of the lookup: detail, bulk items, scans without cache fills", async () => {
  const lookup = await fixtureLookup(FIXED_NOW, await openDataSet(await writeFixtureDataDir()));
  const metrics = new Metrics({ dataSet: () => null, version: "test", routes: ROUTE_LABELS });
  const counted = metrics.countLookups(lookup);
  assert.ok(counted instanceof Lookup, "a lookup like any other");
  assert.equal(counted.withoutCacheFills(() => "scanned"), "scanned");
  assert.deepEqual(counted.item("81.2.69.142"), lookup.item("81.2.69.142"));
  assert.deepEqual(counted.item("1.2.3"), lookup.item("1.2.3"), "an invalid line stays an item");
  counted.find("81.2.69.142");
  counted.detail("81.2.69.142");
  const total = /ipintel_lookups_total (\d+)/.exec(metrics.render())?.[1];
  assert.equal(total, "3", "items with data, lookups and details are counted; failed items not");
});
