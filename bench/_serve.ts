/**
 * Starting `ipintel serve` as a subprocess for the start-up and bulk
 * benchmarks: a free port, stderr drained (kept for errors), the time from
 * spawn to the first 200 on `/ip`, and the process's resident memory.
 *
 * @module
 */

export const ROOT = new URL("..", import.meta.url).pathname;
export const DATA_DIR = Deno.env.get("IPINTEL_DATA_DIR") ?? `${ROOT}data`;

/**
 * The V8 flags `deno task start` serves with (deno.json's `start` task), so
 * that a benchmark runs the server as users run it.
 */
export const SERVER_V8_FLAGS: string[] =
  JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)).tasks.start.match(/--v8-flags=\S+/g) ?? [];

/** A positive integer from the environment, or the fallback. */
export function envInt(name: string, fallback: number): number {
  const text = Deno.env.get(name);
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

export interface RunningServer {
  port: number;
  child: Deno.ChildProcess;
  /** Milliseconds from spawn to the first 200 on `GET /ip/8.8.8.8`. */
  readyMs: number;
  stop(): Promise<void>;
}

/** A port that was free a moment ago. */
/**
 * Runs `deno <args>` in the repository, draining its stderr continuously (a
 * full pipe would block the server) and keeping the last 4,000 characters.
 */
export function spawnDeno(args: string[]): { child: Deno.ChildProcess; stderrTail: () => string } {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  return { child, stderrTail: drainStderr(child) };
}

/** Reads a child's piped stderr as it comes (so it never blocks); returns its last 4,000 characters. */
export function drainStderr(child: Deno.ChildProcess): () => string {
  let tail = "";
  (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      tail = (tail + decoder.decode(chunk, { stream: true })).slice(-4000);
    }
  })().catch(() => {});
  return () => tail;
}

/** `main.ts serve` on 127.0.0.1:`port`: how every bench starts ipintel (options follow). */
export function serveArgs(port: number): string[] {
  return ["main.ts", "serve", "--port", String(port), "--host", "127.0.0.1"];
}

export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/**
 * Spawns `deno run -A main.ts serve` (with {@link SERVER_V8_FLAGS}) and `options` (auth off; a KV file in
 * `dir` unless options name one) and polls `/ip/8.8.8.8` every 5 ms until it
 * answers 200: "ready" as a user sees it.
 */
export async function startServer(dir: string, options: string[] = []): Promise<RunningServer> {
  const port = freePort();
  const args = ["run", "-A", ...SERVER_V8_FLAGS, ...serveArgs(port)];
  const kv = options.includes("--kv") ? [] : ["--kv", `${dir}/bench-${port}.kv`];
  const started = performance.now();
  const { child, stderrTail } = spawnDeno([
    ...args,
    "--data-dir",
    DATA_DIR,
    "--auth",
    "off",
    "--update-interval",
    "off", // a benchmark never reaches the internet
    ...kv,
    ...options,
  ]);
  let exited = false;
  child.status.then(() => exited = true);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // already exited
    }
    await child.status;
  };
  const deadline = started + 120_000;
  while (performance.now() < deadline) {
    if (exited) throw new Error(`the server exited before answering; stderr:\n${stderrTail()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/ip/8.8.8.8`);
      await response.body?.cancel();
      if (response.status === 200) {
        return { port, child, readyMs: performance.now() - started, stop };
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await stop();
  throw new Error(`the server did not answer 200 within 120 s; stderr:\n${stderrTail()}`);
}

/** Resident memory of a process in MB (VmRSS; worker isolates are threads, so included). */
export function rssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  return kb / 1024;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Cores busy machine-wide (from /proc/stat) over `fn`, to report the load a figure was taken under. */
export async function machineLoad<T>(fn: () => Promise<T>): Promise<{ value: T; cores: number }> {
  const busy = () => {
    const f = Deno.readTextFileSync("/proc/stat").split("\n", 1)[0]!.trim().split(/\s+/).map(
      Number,
    );
    return { busy: f[1]! + f[2]! + f[3]! + f[6]! + f[7]!, at: performance.now() };
  };
  const before = busy();
  const value = await fn();
  const after = busy();
  return { value, cores: (after.busy - before.busy) / 100 / ((after.at - before.at) / 1000) };
}
