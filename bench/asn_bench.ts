/**
 * The ASN view's cost on the default data: the time of the first `/asn/{n}`
 * answer after a load (it builds the index), the memory the index keeps
 * (resident and heap, after a collection), and the time of later answers.
 * The index is built on first use, so start-up (bench/startup_bench.ts) does
 * not pay it.
 *
 * Run: `deno run --allow-read --allow-env --v8-flags=--expose-gc bench/asn_bench.ts`.
 *
 * @module
 */

import { createAsnView } from "../src/core/asn/view.ts";
import { createLookup } from "../src/core/lookup/lookup.ts";
import { openDataSet } from "../src/data/sources/data_set.ts";
import { createUserAgentParser } from "../src/core/ua/parse.ts";
import { knownAddresses } from "./_addresses.ts";
import { DATA_DIR } from "./_serve.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("Run with --v8-flags=--expose-gc: the memory figures need a collection");
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

// A served process's state: the data set, and the heap grown by 10,000 lookups.
const data = await openDataSet(DATA_DIR);
const lookup = createLookup({
  data,
  now: () => new Date(),
  parseUserAgent: createUserAgentParser(),
});
for (const ip of await knownAddresses(DATA_DIR, 10_000, 3)) lookup.find(ip);
const view = createAsnView();
const settle = async () => {
  // Array buffers are freed by a background sweeper: collect and let it run, a few times.
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};
await settle();
const before = Deno.memoryUsage();
let t = performance.now();
await view.answer("15169", data, null, "json");
const firstMs = performance.now() - t;
await settle();
const after = Deno.memoryUsage();

const samples: number[] = [];
for (const asn of ["15169", "13335", "16509", "3320", "7018", "4134"]) {
  t = performance.now();
  await view.answer(asn, data, null, "json");
  samples.push(performance.now() - t);
}
samples.sort((a, b) => a - b);
console.log(`RSS before: ${mb(before.rss)} MB (data set open, 10,000 lookups served)`);
console.log(`first answer (builds the index): ${firstMs.toFixed(0)} ms`);
console.log(
  `kept after a collection: RSS +${mb(after.rss - before.rss)} MB, heap +${
    mb(after.heapUsed - before.heapUsed)
  } MB, external +${mb(after.external - before.external)} MB`,
);
console.log(
  `later answers (6 large ASes): median ${samples[3]!.toFixed(1)} ms, max ${
    samples[5]!.toFixed(1)
  } ms`,
);
