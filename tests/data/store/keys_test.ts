import assert from "node:assert/strict";
import {
  hashesEqual,
  hashKey,
  KEY_PREFIX,
  type KeyStore,
  KvKeyStore,
  MemoryKeyStore,
} from "../../../src/data/store/keys.ts";

/** Both implementations, each fresh; the KV one on a real file so that a scan sees what is stored. */
const STORES: [
  string,
  () => Promise<{ store: KeyStore; kv?: Deno.Kv; done: () => Promise<void> }>,
][] = [
  ["Deno KV", async () => {
    const dir = await Deno.makeTempDir({ prefix: "ipintel-keys-" });
    const kv = await Deno.openKv(`${dir}/keys.kv`);
    return {
      store: new KvKeyStore(kv),
      kv,
      done: async () => {
        kv.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  }],
  ["memory", () => Promise.resolve({ store: new MemoryKeyStore(), done: () => Promise.resolve() })],
];

for (const [label, open] of STORES) {
  Deno.test(`${label} key store: a new key has the prefix, 192 random bits, and is stored as its hash`, async () => {
    const { store, done } = await open();
    try {
      const a = await store.create({ name: "acme", limit: 50, window: 10 });
      const b = await store.create({ name: "beta" });
      assert.match(a.key, /^ipi_[A-Za-z0-9_-]{32}$/);
      assert.ok(a.key.startsWith(KEY_PREFIX));
      assert.notEqual(a.key, b.key);
      assert.equal(a.record.hash, hashKey(a.key));
      assert.deepEqual(
        { name: a.record.name, limit: a.record.limit, window: a.record.window, revoked: false },
        { name: "acme", limit: 50, window: 10, revoked: a.record.revoked },
      );
      assert.equal(b.record.limit, null, "no own limit: the server default applies");
      const listed = await store.list();
      assert.deepEqual(listed.map((r) => r.name), ["acme", "beta"]);
      assert.ok(!JSON.stringify(listed).includes(a.key), "a listing never holds a key");
    } finally {
      await done();
    }
  });

  Deno.test(`${label} key store: revoke and rotate keep the id and bump the version`, async () => {
    const { store, done } = await open();
    try {
      const { record, key } = await store.create({ name: "acme", limit: 5 });
      const v1 = await store.version();
      const rotated = await store.rotate(record.id);
      assert.equal(rotated.record.id, record.id);
      assert.equal(rotated.record.limit, 5, "settings survive a rotation");
      assert.notEqual(rotated.key, key);
      assert.equal(rotated.record.hash, hashKey(rotated.key));
      const v2 = await store.version();
      assert.notEqual(v2, v1);
      const revoked = await store.revoke(record.id);
      assert.equal(revoked.revoked, true);
      assert.notEqual(await store.version(), v2);
      assert.equal((await store.list())[0]!.revoked, true);
      await assert.rejects(store.revoke("nope"), /No API key with id "nope"/);
      await assert.rejects(store.rotate("nope"), /No API key with id "nope"/);
      await assert.rejects(store.create({ name: "  " }), /non-empty --name/);
    } finally {
      await done();
    }
  });
}

Deno.test("the KV holds no plaintext key: every entry scanned after creates and rotations", async () => {
  const { store, kv, done } = await STORES[0]![1]();
  try {
    const issued = [
      await store.create({ name: "one" }),
      await store.create({ name: "two", limit: 1 }),
    ];
    issued.push(await store.rotate(issued[0]!.record.id));
    let entries = 0;
    for await (const entry of kv!.list({ prefix: [] })) {
      entries++;
      const text = JSON.stringify(entry.key) +
        JSON.stringify(entry.value, (_, v) => typeof v === "bigint" ? String(v) : v);
      for (const { key } of issued) {
        assert.ok(!text.includes(key), `entry ${JSON.stringify(entry.key)} holds a key`);
        assert.ok(!text.includes(key.slice(KEY_PREFIX.length)), "not even without its prefix");
      }
    }
    assert.ok(entries >= 5, `scanned ${entries} entries`);
  } finally {
    await done();
  }
});

Deno.test("hashesEqual() compares equal, unequal and different-length hashes", () => {
  const h = hashKey("ipi_example");
  assert.equal(hashesEqual(h, hashKey("ipi_example")), true);
  assert.equal(hashesEqual(h, hashKey("ipi_example2")), false);
  assert.equal(hashesEqual(h, h.slice(1)), false);
  // The FIPS 180-2 test vector for "abc"
  assert.equal(hashKey("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});
