import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { sha256Hex } from "../../../src/data/store/sha256.ts";
import { seededRandom } from "../../_random.ts";

Deno.test("sha256Hex gives FIPS 180-4's digests (the standard's own examples)", () => {
  assert.equal(
    sha256Hex("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.equal(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(
    sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
});

Deno.test("sha256Hex equals node:crypto on keys, block edges and random UTF-16 text", () => {
  const random = seededRandom(256);
  const inputs = ["ipi_0IpuW9fUJbhcKxL0Ib4VQUd9kcw8SPlw", "é🇺🇸\u0000", "\ud800"];
  for (const length of [55, 56, 63, 64, 65, 119, 120, 1000]) inputs.push("k".repeat(length));
  for (let i = 0; i < 500; i++) {
    const length = Math.floor(random() * 150);
    inputs.push(
      Array.from({ length }, () => String.fromCharCode(Math.floor(random() * 0x10000))).join(""),
    );
  }
  for (const text of inputs) {
    assert.equal(sha256Hex(text), createHash("sha256").update(text).digest("hex"), text);
  }
});
