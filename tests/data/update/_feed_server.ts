/** A local HTTP server for update tests: serves files by path, with ETag and Last-Modified. */

import { MmdbWriter } from "../../../src/data/mmdb/writer/writer.ts";
import { writeManifest } from "../../../src/data/sources/manifest.ts";
import type { SourceSpec } from "../../../src/data/sources/sources_file.ts";
import { runUpdate, type UpdateOptions } from "../../../src/data/update/update.ts";

export interface Route {
  body?: Uint8Array | string;
  status?: number;
  etag?: string;
  lastModified?: string;
  /** Never answer (until the server shuts down). */
  hang?: boolean;
  /** Announce this Content-Length but send only `body`, then cut the connection. */
  truncateTo?: number;
  /** Send `body` one byte every this many milliseconds (a trickle that never goes quiet). */
  drip?: number;
}

export interface FeedServer {
  url: (path: string) => string;
  routes: Map<string, Route>;
  /** Requests so far: path and the conditional headers sent. */
  requests: { path: string; ifNoneMatch: string | null; ifModifiedSince: string | null }[];
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1, port 0. Truncated answers use a raw socket (only it can lie). */
export function startFeedServer(): FeedServer {
  const routes = new Map<string, Route>();
  const requests: FeedServer["requests"] = [];
  const hanging = new AbortController();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const ifNoneMatch = req.headers.get("if-none-match");
    const ifModifiedSince = req.headers.get("if-modified-since");
    requests.push({ path, ifNoneMatch, ifModifiedSince });
    const route = routes.get(path);
    if (!route) return new Response("Not found", { status: 404 });
    if (route.hang) {
      await new Promise((resolve) => hanging.signal.addEventListener("abort", resolve));
      return new Response("late", { status: 503 });
    }
    const headers: Record<string, string> = {};
    if (route.etag) headers.etag = route.etag;
    if (route.lastModified) headers["last-modified"] = route.lastModified;
    if (route.etag && ifNoneMatch === route.etag) {
      return new Response(null, { status: 304, headers });
    }
    const body = typeof route.body === "string" ? new TextEncoder().encode(route.body) : route.body;
    if (route.drip && body) return new Response(dripping(body, route.drip), { headers });
    return new Response(body?.slice() ?? null, { status: route.status ?? 200, headers });
  });
  // Raw sockets for truncated answers: Deno.serve always sends a correct length.
  const raw = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of raw) {
      (async () => {
        const buffer = new Uint8Array(4096);
        const n = await conn.read(buffer).catch(() => null);
        const path = new TextDecoder().decode(buffer.subarray(0, n ?? 0)).split(" ")[1] ?? "";
        requests.push({ path, ifNoneMatch: null, ifModifiedSince: null });
        const route = routes.get(path);
        const body = new TextEncoder().encode(String(route?.body ?? ""));
        const head =
          `HTTP/1.1 200 OK\r\ncontent-length: ${route?.truncateTo}\r\nconnection: close\r\n\r\n`;
        await conn.write(new TextEncoder().encode(head)).catch(() => {});
        await conn.write(body).catch(() => {});
        conn.close();
      })();
    }
  })().catch(() => {});
  const port = server.addr.port;
  const rawPort = (raw.addr as Deno.NetAddr).port;
  return {
    url: (path) =>
      `http://127.0.0.1:${routes.get(path)?.truncateTo !== undefined ? rawPort : port}${path}`,
    routes,
    requests,
    async close() {
      hanging.abort();
      raw.close();
      await server.shutdown();
    },
  };
}

/** The base data directory's ASN database: every address in AS64500. */
function baseAsn(): Uint8Array {
  const writer = new MmdbWriter({ databaseType: "Test-ASN", buildEpoch: 1_700_000_000 });
  writer.insertNetwork("::/0", {
    autonomous_system_number: 64500,
    autonomous_system_organization: "Test network",
  });
  writer.insertNetwork("0.0.0.0/0", {
    autonomous_system_number: 64500,
    autonomous_system_organization: "Test network",
  });
  return writer.toBytes();
}

/** A data directory whose ASN database knows every address (so lookups are found) and nothing else. */
export async function writeBaseDataDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-update-" });
  await Deno.writeFile(`${dir}/asn.mmdb`, baseAsn());
  await writeManifest(dir, {
    sources: [{
      name: "test-asn",
      kind: "asn",
      file: "asn.mmdb",
      sha256: "",
      source: "test",
      license: "test",
      attribution: "test",
      built: "2026-01-01T00:00:00.000Z",
      databaseType: "Test-ASN",
    }],
  });
  return dir;
}

/** A feed source entry pointing at the server. */
export function feedSource(
  server: FeedServer,
  name: string,
  kind: SourceSpec["kind"],
  path: string,
  more: Partial<SourceSpec> = {},
): SourceSpec {
  return {
    name,
    kind,
    format: "ip-list",
    url: server.url(path),
    license: `${name} licence`,
    attribution: `${name} attribution`,
    ...more,
  };
}

/**
 * runUpdate with short timeouts and back-off, collecting progress lines. The
 * base directory's ASN database is in the sources too (an update installs
 * exactly the sources file), served here; its own lines are left out.
 */
export async function update(
  dataDir: string,
  sources: SourceSpec[],
  more: Partial<UpdateOptions> = {},
) {
  const progress: string[] = [];
  const base: SourceSpec = {
    name: "test-asn",
    kind: "asn",
    format: "mmdb",
    url: "http://base.invalid/asn.mmdb",
    license: "test",
    attribution: "test",
  };
  const fetchFn = more.fetchFn ?? fetch;
  const outcomes = await runUpdate({
    dataDir,
    sources: sources.some((s) => s.kind === "asn") ? sources : [base, ...sources],
    registry: "http://127.0.0.1:9", // no npm sources in these tests
    timeoutMs: 2000,
    backoffMs: 10,
    progress: (line) => {
      if (!line.startsWith(`${base.name}: `)) progress.push(line);
    },
    ...more,
    // The base database answers from memory, "not modified" once installed.
    fetchFn: (input, init) => {
      if (String(input) !== base.url) return fetchFn(input, init);
      const headers = { etag: '"base"' };
      const current = new Headers(init?.headers).get("if-none-match") === headers.etag;
      return Promise.resolve(
        current
          ? new Response(null, { status: 304, headers })
          : new Response(baseAsn().slice(), { headers }),
      );
    },
  });
  return { outcomes: outcomes.filter((o) => o.name !== base.name), progress };
}

/** `bytes` one at a time, `ms` apart, until done or cancelled. */
function dripping(bytes: Uint8Array, ms: number): ReadableStream<Uint8Array> {
  let at = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  return new ReadableStream({
    pull: (controller) =>
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          if (at < bytes.length) controller.enqueue(bytes.slice(at, ++at));
          else controller.close();
          resolve();
        }, ms);
      }),
    cancel: () => clearTimeout(timer),
  });
}
