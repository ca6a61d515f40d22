import assert from "node:assert/strict";
import { kvReadinessCheck } from "../../../src/process/server/kv.ts";
import { testServer } from "./_server.ts";

const answer = async (response: Response) => ({
  status: response.status,
  body: await response.json(),
});

Deno.test("/ready is 503 until the data is loaded, while /health answers 200", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const t = await testServer({ log: "off" }, { loaded: false, checks: [kvReadinessCheck(kv)] });
    const ready = await answer(await t.request("/ready"));
    assert.deepEqual(ready, {
      status: 503,
      body: { success: false, message: "Not ready: data is not loaded yet" },
    });
    assert.deepEqual(await answer(await t.request("/health")), {
      status: 200,
      body: { success: true, data: { status: "ok" } },
    });
    assert.equal((await t.request("/ip/81.2.69.142")).status, 503, "lookups wait for the data");
  } finally {
    kv.close();
  }
});

Deno.test("/ready is 200 with the databases once the data is loaded and the KV answers", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const t = await testServer({ log: "off" }, { checks: [kvReadinessCheck(kv)] });
    const response = await t.request("/ready");
    assert.equal(response.headers.get("cache-control"), "no-store");
    const { status, body } = await answer(response);
    assert.equal(status, 200);
    assert.equal(body.data.status, "ready");
    assert.deepEqual(body.data.databases.map((d: { kind: string }) => d.kind), ["city", "asn"]);
  } finally {
    kv.close();
  }
});

Deno.test("/ready is 503 naming the KV when it does not answer, or a check that hangs", async () => {
  const kv = await Deno.openKv(":memory:");
  kv.close(); // a KV that fails every read
  const t = await testServer({ log: "off" }, { checks: [kvReadinessCheck(kv)] });
  const { status, body } = await answer(await t.request("/ready"));
  assert.equal(status, 503);
  assert.match(body.message, /^Not ready: Deno KV: /);
  assert.equal((await t.request("/health")).status, 200, "still alive");

  // A check that never settles is cut off by the timeout (2 s).
  const hung = await testServer({ log: "off" }, {
    checks: [{ name: "Deno KV", check: () => new Promise(() => {}) }],
  });
  const slow = await answer(await hung.request("/ready"));
  assert.deepEqual(slow.body.message, "Not ready: Deno KV: no answer within 2000 ms");
});
