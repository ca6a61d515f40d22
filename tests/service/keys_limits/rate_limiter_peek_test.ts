/** RateLimiter.peek(): what a charge would decide now, counting nothing (the admission of /mcp). */

import assert from "node:assert/strict";
import { RateLimiter } from "../../../src/service/keys_limits/rate_limiter.ts";
import { MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";

Deno.test("peek() says whether one more unit fits without counting it, and null for a caller never charged", async () => {
  const clock = { ms: 60_000 * 1000 };
  const limiter = new RateLimiter({ counters: new MemoryRateCounters(), now: () => clock.ms });
  assert.equal(limiter.peek("k", 3, 60), null, "no counts: nothing refuses it");
  for (let i = 0; i < 2; i++) assert.equal((await limiter.consume("k", 3, 60)).kind, "allowed");
  for (let i = 0; i < 5; i++) assert.equal(limiter.peek("k", 3, 60)?.kind, "allowed");
  assert.equal((await limiter.consume("k", 3, 60)).kind, "allowed", "peeks counted nothing");
  const spent = limiter.peek("k", 3, 60)!;
  assert.equal(spent.kind, "refused");
  assert.equal(spent.remaining, 0);
  assert.equal(spent.retryAfterSeconds, 60);
  clock.ms += 120_000;
  assert.equal(limiter.peek("k", 3, 60)?.kind, "allowed", "two windows later it fits again");
});
