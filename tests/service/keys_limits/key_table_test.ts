import assert from "node:assert/strict";
import { MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";

Deno.test("the key table remembers the hashes of key-sized secrets only: a 30 KB header is checked, not kept", async () => {
  const store = new MemoryKeyStore();
  const { key } = await store.create({ name: "acme" });
  const table = new KeyTable(store);
  await table.refresh();
  assert.equal(table.find(key)?.name, "acme");
  assert.equal(table.find("ipi_" + "x".repeat(32)), null);
  assert.equal(table.remembered, 2);
  const hostile = "ipi_" + "y".repeat(30_000);
  assert.equal(table.find(hostile), null);
  assert.equal(table.find(hostile), null);
  assert.equal(table.remembered, 2, "not remembered");
  // A key cut from a longer header (trimmed) is still found.
  assert.equal(table.find(`${key}${" ".repeat(30_000)}`.trim())?.name, "acme");
});
