/**
 * An independent time-zone oracle: Python's `zoneinfo` (the system tzdata),
 * asked once for a batch of (zone, epoch seconds) pairs.
 */

/** What Python says about one zone at one instant. */
export interface OracleAnswer {
  /** utcoffset() in seconds east of UTC. */
  offset: number;
  /** dst() in seconds; negative for tzdata's "negative DST" zones (Dublin, Casablanca). */
  dst: number;
  /** The local time, `datetime.isoformat()`: "2026-03-08T01:59:59-05:00". */
  local: string;
}

/**
 * Reads [[zone, epoch], …] as JSON on stdin, writes one answer per pair as JSON.
 * Exit 3: no zoneinfo module; exit 4: no tzdata for a zone (both mean "skip").
 */
const SCRIPT = `
import json, sys
from datetime import datetime
try:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
except ImportError:
    sys.exit(3)
out = []
for zone, epoch in json.load(sys.stdin):
    try:
        tz = ZoneInfo(zone)
    except ZoneInfoNotFoundError:
        print("no tzdata for " + zone, file=sys.stderr)
        sys.exit(4)
    t = datetime.fromtimestamp(epoch, tz)
    out.append({
        "offset": int(t.utcoffset().total_seconds()),
        "dst": int(t.dst().total_seconds()),
        "local": t.isoformat(),
    })
json.dump(out, sys.stdout)
`;

/**
 * Asks python3's zoneinfo about every pair; null (with the reason) when
 * python3 or zoneinfo is missing, so callers can skip visibly.
 */
export async function askZoneinfo(
  pairs: ReadonlyArray<readonly [zone: string, epochSeconds: number]>,
): Promise<{ answers: OracleAnswer[] } | { skipped: string }> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("python3", {
      args: ["-c", SCRIPT],
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (error) {
    return { skipped: `python3 not runnable: ${(error as Error).message}` };
  }
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(pairs)));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const message = new TextDecoder().decode(stderr).trim();
  if (code === 3) return { skipped: "python3 has no zoneinfo module" };
  if (code === 4) return { skipped: `python3 zoneinfo: ${message}` };
  // Anything else is a broken oracle, not a reason to skip.
  if (code !== 0) throw new Error(`python3 oracle failed (${code}): ${message}`);
  const answers = JSON.parse(new TextDecoder().decode(stdout)) as OracleAnswer[];
  if (answers.length !== pairs.length) throw new Error("oracle answered a different count");
  return { answers };
}
