/** What the tests that need a real socket share: `ipintel serve` as a subprocess, raw reads. */

const ROOT = new URL("..", import.meta.url).pathname;

export interface ServeProcess {
  child: Deno.ChildProcess;
  port: number;
  /** Everything it wrote on stderr so far. */
  stderr: () => string;
  /** Sends SIGKILL (if still running) and waits for the exit. */
  kill(): Promise<void>;
  /** Sends SIGTERM (a graceful stop) and waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts `deno run <permissions> main.ts serve --port 0` with `env` and
 * resolves once it listens and has loaded its data (the "data loaded" line).
 * `stdout: "piped"` leaves the access log to the caller (`child.stdout`).
 */
export async function startServe(
  env: Record<string, string>,
  permissions: string[] = ["-A"],
  stdout: "null" | "piped" = "null",
): Promise<ServeProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, "main.ts", "serve", "--port", "0"],
    cwd: ROOT,
    // Two workers unless a test says otherwise: the default (one per CPU) could be dozens.
    env: { IPINTEL_WORKERS: "2", IPINTEL_UPDATE_INTERVAL: "off", ...env },
    stdin: "null",
    stdout,
    stderr: "piped",
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  const { promise: port, resolve: resolvePort } = Promise.withResolvers<number>();
  (async () => {
    for await (const chunk of child.stderr) {
      text += decoder.decode(chunk, { stream: true });
      // Ready once the data is loaded (the listening line comes first).
      const listening = /listening on https?:\/\/127\.0\.0\.1:(\d+)/.exec(text);
      if (listening && /data loaded/.test(text)) resolvePort(Number(listening[1]));
    }
    resolvePort(-1);
  })();
  const timeout = setTimeout(() => resolvePort(-1), 60_000);
  const found = await port;
  clearTimeout(timeout);
  const signal = (name: Deno.Signal) => async () => {
    try {
      child.kill(name);
    } catch { /* exited */ }
    await child.status;
  };
  const kill = signal("SIGKILL");
  if (found < 0) {
    await kill();
    throw new Error(`serve did not start:\n${text}`);
  }
  return { child, port: found, stderr: () => text, kill, stop: signal("SIGTERM") };
}

/** GET over a connection of its own (with workers, each new connection may reach another one). */
export async function fetchFresh(url: string, init: RequestInit = {}): Promise<Response> {
  const client = Deno.createHttpClient({});
  try {
    const response = await fetch(url, { ...init, client });
    const body = await response.arrayBuffer();
    return new Response(body, response);
  } finally {
    client.close();
  }
}

/** Polls `condition` every 20 ms until it holds, or throws after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("Timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Everything `conn` sends until it closes, as text (for responses read off a raw socket). */
export async function readToClose(conn: Deno.Conn): Promise<string> {
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(64 * 1024);
  for (;;) {
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
  }
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) all.set(chunk, at), at += chunk.length;
  return new TextDecoder().decode(all);
}

/** A chunked body's content (a streamed answer, e.g. POST /bulk); sizes count UTF-8 bytes. */
export function unchunk(body: string): string {
  const bytes = new TextEncoder().encode(body);
  const out: Uint8Array[] = [];
  let at = 0;
  for (;;) {
    const end = bytes.indexOf(13, at);
    const size = parseInt(new TextDecoder().decode(bytes.slice(at, end)), 16);
    if (!(size > 0)) break;
    out.push(bytes.slice(end + 2, end + 2 + size));
    at = end + 2 + size + 2;
  }
  return new TextDecoder().decode(new Uint8Array(out.flatMap((chunk) => [...chunk])));
}
