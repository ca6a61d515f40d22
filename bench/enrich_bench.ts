/**
 * `ipintel enrich` against what a user would otherwise write: a Python script
 * using `csv` and MaxMind's reader with its libmaxminddb C extension (Debian
 * python3-maxminddb) that adds the same three fields (country, AS
 * organisation, and security, which the City and ASN files cannot fill) from
 * the same City and ASN files. The table: 1,000,000 CSV rows (BENCH_LINES) of
 * a header, a timestamp, the address column of bench:stream's mix (mostly
 * distinct public addresses, 1% invalid, 1% reserved) and two other columns.
 *
 * Contenders, interleaved, BENCH_ROUNDS (3) rounds, each ratio within its round
 * (the machine is shared): the Python script; `ipintel enrich --get
 * country,asn_org,security` (its defaults); the same with `--workers 1` (one
 * isolate: the cost per core) and `--workers 2` (workers from the first MB); the same
 * with `--time-column ts` (each row
 * answered as of its own time, from the list history; times to the second, as
 * logs write them, spread over the last hour or the history's span if shorter). Rows per second of
 * wall time, and CPU seconds (user + system) from /usr/bin/time. Goals: ≥ 3×
 * the script, ≥ 2× with `--time-column`.
 *
 * Run: `deno task bench:enrich`.
 *
 * @module
 */

import { DATA_DIR, envInt, median } from "./_serve.ts";
import { mixedLines, timedRun } from "./stream_bench.ts";
import { pythonWith } from "../tests/_python.ts";
import { readManifest } from "../src/data/sources/manifest.ts";
import { loadHistory } from "../src/data/history/history.ts";

const LINES = envInt("BENCH_LINES", 1_000_000);
const ROUNDS = envInt("BENCH_ROUNDS", 3);

const PYTHON_ENRICH = `
import csv, sys
import maxminddb
city = maxminddb.open_database(sys.argv[1], maxminddb.MODE_MMAP_EXT)
asn = maxminddb.open_database(sys.argv[2], maxminddb.MODE_MMAP_EXT)
reader = csv.reader(sys.stdin)
writer = csv.writer(sys.stdout, lineterminator="\\n")
header = next(reader)
column = header.index("client_ip")
writer.writerow(header + ["ip_country", "ip_asn_org", "ip_security", "ip_error"])
for row in reader:
    try:
        place = city.get(row[column]) or {}
        network = asn.get(row[column]) or {}
        country = place.get("country", {}).get("names", {}).get("en", "")
        writer.writerow(row + [country, network.get("autonomous_system_organization", ""), "", ""])
    except ValueError as error:
        writer.writerow(row + ["", "", "", str(error)])
`;

interface Run {
  wall: number;
  cpu: number;
}

/** One contender's run over the table: wall and CPU seconds (its output: one line a row). */
async function timed(command: string, args: string[], input: string): Promise<Run> {
  const env = { IPINTEL_UPDATE_INTERVAL: "off", IPINTEL_DATA_DIR: DATA_DIR };
  const { seconds, cpuSeconds } = await timedRun(command, args, input, env, LINES + 1);
  return { wall: seconds, cpu: cpuSeconds };
}

if (import.meta.main) {
  const python = await pythonWith("import maxminddb.extension");
  if (!python) throw new Error("python3-maxminddb (with its C extension) is not installed");
  const manifest = await readManifest(DATA_DIR);
  const file = (kind: string) =>
    `${DATA_DIR}/${manifest!.sources.find((s) => s.kind === kind)!.file}`;
  const addresses = await mixedLines(LINES);
  // Times over the last hour, or since the list history starts if that is later: each row is
  // answered from the lists of its time (without a history, every row takes the fallback).
  const history = await loadHistory(DATA_DIR);
  const now = Date.now();
  const from = Math.max(now - 3_600_000, history ? history.start.getTime() + 1000 : 0);
  if (!history) console.log("note: no list history in the data directory");
  // At a log's resolution, the second: `2026-11-28T14:40:00Z`.
  const second = (ms: number) => new Date(ms).toISOString().slice(0, 19) + "Z";
  const rows = addresses.map((ip, i) =>
    `${second(from + ((now - from) * i) / LINES)},${ip},user${i % 977},${200 + (i % 5)}`
  );
  const input = await Deno.makeTempFile({ suffix: ".csv" });
  await Deno.writeTextFile(input, "ts,client_ip,user,status\n" + rows.join("\n") + "\n");
  const script = await Deno.makeTempFile({ suffix: ".py" });
  await Deno.writeTextFile(script, PYTHON_ENRICH);
  const enrich = ["run", "-A", "main.ts", "enrich", "--input", "csv", "--column", "client_ip"];
  const get = ["--get", "country,asn_org,security"];
  console.log(`enrich: ${LINES} CSV rows, ${ROUNDS} rounds (rows/s of wall time; CPU s)`);
  const ratios: { plain: number; alone: number; two: number; timed: number }[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const py = await timed(python, [script, file("city"), file("asn")], input);
      const plain = await timed(Deno.execPath(), [...enrich, ...get], input);
      const alone = await timed(Deno.execPath(), [...enrich, ...get, "--workers", "1"], input);
      const two = await timed(Deno.execPath(), [...enrich, ...get, "--workers", "2"], input);
      const withTime = await timed(
        Deno.execPath(),
        [...enrich, ...get, "--time-column", "ts"],
        input,
      );
      const rate = (r: Run) => Math.round(LINES / r.wall);
      ratios.push({
        plain: py.wall / plain.wall,
        alone: py.wall / alone.wall,
        two: py.wall / two.wall,
        timed: py.wall / withTime.wall,
      });
      console.log(
        `round ${round}: python ${rate(py)}/s (${py.cpu.toFixed(1)} s CPU), enrich ${
          rate(plain)
        }/s (${plain.cpu.toFixed(1)} s), one isolate ${rate(alone)}/s (${
          alone.cpu.toFixed(1)
        } s), --workers 2 ${rate(two)}/s (${two.cpu.toFixed(1)} s), --time-column ${
          rate(withTime)
        }/s (${withTime.cpu.toFixed(1)} s): ${(py.wall / plain.wall).toFixed(2)}x, ${
          (py.wall / alone.wall).toFixed(2)
        }x, ${(py.wall / two.wall).toFixed(2)}x, ${(py.wall / withTime.wall).toFixed(2)}x`,
      );
    }
    console.log(
      `median: enrich ${median(ratios.map((r) => r.plain)).toFixed(2)}x the Python script ` +
        `(goal >= 3; one isolate, --workers 1: ${
          median(ratios.map((r) => r.alone)).toFixed(2)
        }x; --workers 2: ${median(ratios.map((r) => r.two)).toFixed(2)}x), --time-column ${
          median(ratios.map((r) => r.timed)).toFixed(2)
        }x (goal >= 2)`,
    );
  } finally {
    await Deno.remove(input);
    await Deno.remove(script);
  }
}
