import assert from "node:assert/strict";
import { SlotTable } from "../../../src/base/cache/slot_table.ts";

Deno.test("SlotTable holds a value per key, and a key of the same slot replaces it", () => {
  const table = new SlotTable<string>(4); // 16 slots
  assert.equal(table.get(0), undefined); // an empty slot is no key 0
  table.set(3, "three");
  table.set(0, "zero");
  assert.equal(table.get(3), "three");
  assert.equal(table.get(0), "zero");
  assert.equal(table.get(19), undefined); // same slot as 3, another key
  table.set(19, "nineteen");
  assert.equal(table.get(19), "nineteen");
  assert.equal(table.get(3), undefined);
});

Deno.test("SlotTable tells values apart by their tag", () => {
  const table = new SlotTable<string>(8);
  table.set(7, "Germany", "en");
  assert.equal(table.get(7, "en"), "Germany");
  assert.equal(table.get(7, "de"), undefined);
  assert.equal(table.get(7), undefined);
  table.set(7, "Deutschland", "de");
  assert.equal(table.get(7, "de"), "Deutschland");
  assert.equal(table.get(7, "en"), undefined);
});

Deno.test("SlotTable refuses a size it cannot hold", () => {
  assert.throws(() => new SlotTable(0), RangeError);
  assert.throws(() => new SlotTable(25), RangeError);
  assert.throws(() => new SlotTable(2.5), RangeError);
});
