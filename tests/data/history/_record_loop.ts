/**
 * A child process for the crash test: records run after run of a large,
 * changing list into the data directory given, printing "recorded N" after
 * each write returned, until it is killed.
 */

import { recordHistory } from "../../../src/data/history/record.ts";
import { writeFileAtomic } from "../../../src/data/sources/manifest.ts";

const dataDir = Deno.args[0]!;
const encoder = new TextEncoder();
for (let n = 1;; n++) {
  // 40,000 addresses, a different tenth each run: every write is a new, sizeable file.
  const networks = Array.from({ length: 40_000 }, (_, i) => {
    const x = i < 36_000 ? i : i + n * 4_000;
    return `10.${(x >> 16) & 255}.${(x >> 8) & 255}.${x & 255}`;
  });
  await recordHistory(
    dataDir,
    { sources: [{ name: "big", kind: "threat", download: { file: "big.txt", sha256: `s${n}` } }] },
    {
      at: new Date(Date.UTC(2026, 0, 1) + n * 3_600_000),
      days: 365,
      write: writeFileAtomic,
      parse: () => ({ networks, ranges: [], asns: [] }),
      progress: (line) => console.error(line),
    },
  );
  await Deno.stdout.write(encoder.encode(`recorded ${n}\n`));
}
