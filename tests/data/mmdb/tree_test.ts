/** The tree walk of src/data/mmdb/tree.ts against an independent bit-by-bit walk, over writer-built files. */

import assert from "node:assert/strict";
import { createTreeWalk } from "../../../src/data/mmdb/tree.ts";
import { build, typedMetadata, v4, walk } from "./_fixtures.ts";
import { seededRandom } from "../../_random.ts";

/** Networks ending above, at and below the 16 bits the walk's table jumps over. */
const NETWORKS = [
  "10.0.0.0/8",
  "100.64.0.0/10",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "192.169.0.0/17",
  "8.8.8.0/24",
  "1.1.1.1/32",
  "128.0.0.0/1",
  "2001:db8::/32",
  "2a00::/12",
  "2c0f:f000::/20",
];

Deno.test("createTreeWalk ends where a plain walk of every bit ends, at every record size", () => {
  const random = seededRandom(11);
  for (const recordSize of [24, 28, 32] as const) {
    const bytes = build((w) => {
      NETWORKS.forEach((network, i) => w.insertNetwork(network, { n: i }));
    }, { recordSize });
    const meta = typedMetadata(bytes);
    const shape = {
      nodeCount: Number(meta.node_count!.v),
      recordSize,
      ipVersion: Number(meta.ip_version!.v),
    };
    const treeWalk = createTreeWalk(bytes, shape);
    const addresses = [
      ...Array.from({ length: 3000 }, () => v4(Math.floor(random() * 2 ** 32))),
      "10.255.255.255",
      "192.168.255.1",
      "192.169.127.255",
      "192.169.128.0",
      "1.1.1.1",
      "1.1.1.2",
    ];
    for (const ip of addresses) {
      const octets = new Uint8Array(ip.split(".").map(Number));
      const expected = walk(bytes, `::${ip}`);
      const record = expected.record > expected.nodeCount ? expected.record : 0;
      assert.equal(treeWalk(octets), record, `${ip} at record size ${recordSize}`);
    }
    for (let i = 0; i < 2000; i++) {
      const groups = Array.from({ length: 8 }, () => Math.floor(random() * 65536));
      if (i % 2) groups[0] = [0x2001, 0x2a00, 0x2c0f][i % 3]!; // inside or beside the networks
      const bytes16 = new Uint8Array(groups.flatMap((g) => [g >> 8, g & 255]));
      if (bytes16[0] === 0x20 && (bytes16[1] === 0x02 || bytes16[1] === 0x01)) continue; // 6to4, Teredo
      const expected = walk(bytes, groups.map((g) => g.toString(16)).join(":"));
      const record = expected.record > expected.nodeCount ? expected.record : 0;
      assert.equal(treeWalk(bytes16), record, `${groups} at record size ${recordSize}`);
    }
  }
});
