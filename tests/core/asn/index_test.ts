import assert from "node:assert/strict";
import { formatBlock } from "../../../src/core/asn/blocks.ts";
import { buildAsnIndex, buildAsnIndexInSlices } from "../../../src/core/asn/index.ts";
import { asnDatabase } from "./_fixtures.ts";

const index = buildAsnIndex(asnDatabase());
const texts = (asn: number) => {
  const entry = index.find(asn)!;
  return { name: entry.name, ipv4: entry.ipv4.map(formatBlock), ipv6: entry.ipv6.map(formatBlock) };
};

Deno.test("buildAsnIndex() collapses an AS's networks, across its records, in address order", () => {
  assert.deepEqual(texts(100), {
    name: "Example Net",
    ipv4: ["10.0.0.0/23"],
    ipv6: ["2001:db8::/47", "2001:db8:2::/96", "2001:db8:2::5:0:0/96"],
  });
  assert.deepEqual(texts(200), { name: "Other Org", ipv4: ["10.0.2.0/24"], ipv6: [] });
});

Deno.test("buildAsnIndex() counts each AS number once and knows nothing else", () => {
  assert.equal(index.size, 3);
  assert.equal(index.find(300), null);
  assert.equal(index.find(0), null);
});

Deno.test("buildAsnIndex() leaves out the IPv6 ranges that mirror IPv4 (mapped, 6to4, Teredo)", () => {
  // The writer aliases ::ffff:0:0/96, 2002::/16 and 2001::/32 to the IPv4 tree: a walk
  // that followed them would list 10.0.0.0/23 again as IPv6 blocks.
  for (const asn of [100, 200]) {
    for (const text of texts(asn).ipv6) assert.ok(text.startsWith("2001:db8:"), text);
  }
});

Deno.test("buildAsnIndex() refuses bytes that are not a MaxMind DB", () => {
  assert.throws(() => buildAsnIndex(new Uint8Array(100)));
});

Deno.test("buildAsnIndexInSlices() builds the same index, letting timers run between slices", async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  const sliced = await buildAsnIndexInSlices(asnDatabase(), "fixture", 0);
  clearInterval(timer);
  assert.ok(ticks > 0, "the event loop ran during the build");
  assert.equal(sliced.size, index.size);
  for (const asn of [100, 200, 64512]) assert.deepEqual(sliced.find(asn), index.find(asn));
});
