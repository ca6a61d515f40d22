/**
 * Crash safety: the history file is replaced whole (a new file, then a
 * rename). A write cut short loses that update's changes and nothing older;
 * a process killed mid-update (SIGKILL, no clean-up) leaves a readable file.
 */

import assert from "node:assert/strict";
import { loadHistory } from "../../../src/data/history/history.ts";
import { decodeHistory, HISTORY_FILE } from "../../../src/data/history/history_file.ts";
import { type InstalledList, recordHistory } from "../../../src/data/history/record.ts";
import { writeFileAtomic } from "../../../src/data/sources/manifest.ts";

const list = (sha256: string): { sources: InstalledList[] } => ({
  sources: [{ name: "tor-exits", kind: "tor", download: { file: "tor.txt", sha256 } }],
});
const content = (networks: string[]) => () => ({ networks, ranges: [], asns: [] });
const day = (n: number) => new Date(Date.UTC(2026, 10, n, 6));

Deno.test("a write cut short loses that update's changes only; the next update records them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-history-" });
  try {
    const path = `${dir}/${HISTORY_FILE}`;
    await recordHistory(dir, list("a"), {
      at: day(1),
      days: 365,
      write: writeFileAtomic,
      parse: content(["1.1.1.1", "2.2.2.2"]),
    });
    const before = await Deno.readFile(path);

    // The second update dies while writing: half its bytes reach a temporary file.
    const progress: string[] = [];
    await recordHistory(dir, list("b"), {
      at: day(2),
      days: 365,
      progress: (line) => progress.push(line),
      write: async (target, bytes) => {
        await Deno.writeFile(`${target}.tmp-999999`, bytes.subarray(0, bytes.length >> 1));
        throw new Error("killed mid-write");
      },
      parse: content(["1.1.1.1"]),
    });
    assert.deepEqual(progress, ["history: NOT recorded for this update: killed mid-write"]);
    assert.deepEqual(await Deno.readFile(path), before, "the older history is untouched");
    const loaded = await loadHistory(dir);
    assert.deepEqual(loaded!.seen("tor-exits", "2.2.2.2"), {
      firstSeen: day(1).toISOString(),
      lastSeen: day(1).toISOString(),
    });

    // The third update finds the change (2.2.2.2 gone) and records it at its own time.
    await recordHistory(dir, list("c"), {
      at: day(3),
      days: 365,
      write: writeFileAtomic,
      parse: content(["1.1.1.1"]),
    });
    const data = decodeHistory(await Deno.readFile(path), path);
    assert.deepEqual(data.runs, [day(1), day(3)].map((d) => d.getTime() / 1000));
    assert.deepEqual(data.lists["tor-exits"]!.entries, { "1.1.1.1": [0], "2.2.2.2": [0, 1] });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a process killed (SIGKILL) while recording leaves a history that reads, with every acknowledged update", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-history-kill-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", new URL("./_record_loop.ts", import.meta.url).pathname, dir],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    // Kill it once it has acknowledged three updates: wherever the fourth is then.
    let acknowledged = 0;
    let text = "";
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    while (acknowledged < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
      acknowledged = text.match(/recorded \d+\n/g)?.length ?? 0;
    }
    child.kill("SIGKILL");
    await child.status;
    await reader.cancel().catch(() => {});
    assert.ok(acknowledged >= 3, `the child acknowledged ${acknowledged} updates`);

    const path = `${dir}/${HISTORY_FILE}`;
    const data = decodeHistory(await Deno.readFile(path), path);
    assert.ok(data.runs.length >= acknowledged, `${data.runs.length} runs kept`);
    assert.equal(data.runs[0], Date.UTC(2026, 0, 1, 1) / 1000, "the oldest update is still there");
    assert.ok(await loadHistory(dir), "the server loads it");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an absent history is rebuilt from the lists installed now; days 0 removes it; an unreadable one is set aside", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-history-" });
  try {
    const path = `${dir}/${HISTORY_FILE}`;
    const record = (n: number, days: number, progress?: (line: string) => void) =>
      recordHistory(dir, list(`s${n}`), {
        at: day(n),
        days,
        progress,
        write: writeFileAtomic,
        parse: content(["1.1.1.1"]),
      });
    await record(1, 365);
    await Deno.remove(path);
    await record(2, 365);
    // What was listed before the file was lost is known from this update on.
    assert.deepEqual((await loadHistory(dir))!.seen("tor-exits", "1.1.1.1"), {
      firstSeen: day(2).toISOString(),
      lastSeen: day(2).toISOString(),
    });

    await Deno.writeTextFile(path, "garbage");
    const unreadable = (await loadHistory(dir))!;
    assert.equal(unreadable.seen("tor-exits", "1.1.1.1"), null, "the server answers without it");
    assert.throws(() => unreadable.start, /^AppError: The list history cannot be read: /);
    const lines: string[] = [];
    await record(3, 365, (line) => lines.push(line));
    assert.match(
      lines[0]!,
      /^history: .*not a gzipped JSON file.*; kept as .*\.unreadable-\d+, starting a new history$/,
    );
    assert.equal((await loadHistory(dir))!.start.toISOString(), day(3).toISOString());

    const off: string[] = [];
    await record(4, 0, (line) => off.push(line));
    assert.deepEqual(off, ["history: off (IPINTEL_HISTORY_DAYS=0): removed the kept history"]);
    await assert.rejects(Deno.stat(path), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
