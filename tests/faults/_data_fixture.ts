/**
 * A local npm registry and feed server for the data fault suite: small City and ASN
 * packages written by the project's own MMDB writer (8.8.8.8 answers US / AS15169),
 * a sources file naming them, and a runner for the real CLI against a data directory.
 */

import { createHash } from "node:crypto";
import { MmdbWriter } from "../../src/data/mmdb/writer/writer.ts";
export { runCli, spawnCli } from "../_cli.ts";

async function tgz(files: Record<string, Uint8Array | string>): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-fault-pkg-" });
  try {
    await Deno.mkdir(`${dir}/package`);
    for (const [name, content] of Object.entries(files)) {
      await Deno.writeFile(
        `${dir}/package/${name}`,
        typeof content === "string" ? new TextEncoder().encode(content) : content,
      );
    }
    const out = await new Deno.Command("tar", {
      args: ["-czf", `${dir}/p.tgz`, "-C", dir, "package"],
    })
      .output();
    if (!out.success) throw new Error("tar failed");
    return await Deno.readFile(`${dir}/p.tgz`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const integrity = (bytes: Uint8Array) =>
  `sha512-${createHash("sha512").update(bytes).digest("base64")}`;

/** A City database of a few thousand networks (so a build takes a moment to kill). */
function cityMmdb(): Uint8Array {
  const writer = new MmdbWriter({ databaseType: "GeoLite2-City", languages: ["en"] });
  for (let i = 0; i < 4000; i++) {
    writer.insertNetwork(`${10 + (i >> 8)}.${i & 255}.0.0/16`, {
      country: { iso_code: "DE", names: { en: "Germany" } },
    });
  }
  writer.insertNetwork("8.8.8.0/24", {
    country: { iso_code: "US", names: { en: "United States" } },
  });
  return writer.toBytes();
}

function asnCsv(): string {
  const rows = ["8.8.8.0,8.8.8.255,15169,Google LLC"];
  for (let i = 0; i < 20000; i++) {
    const a = 20 + (i >> 8), b = i & 255;
    rows.push(`${a}.${b}.0.0,${a}.${b}.255.255,${64512 + (i % 1000)},Test AS ${i}`);
  }
  return rows.join("\n") + "\n";
}

export interface FaultServer {
  url: string;
  /** Extra paths (hostile feeds): a handler per path. */
  routes: Map<string, (request: Request) => Response | Promise<Response>>;
  /** Writes a sources file naming the packages (and `more` sources) into `dir`. */
  sourcesFile(dir: string, more?: object[]): Promise<string>;
  close(): Promise<void>;
}

export async function startFaultServer(): Promise<FaultServer> {
  const gzipped = new Uint8Array(
    await new Response(
      new Blob([cityMmdb() as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
        new CompressionStream("gzip"),
      ),
    ).arrayBuffer(),
  );
  const city = await tgz({ "package.json": '{"name":"fault-city"}', "City.mmdb.gz": gzipped });
  const asn = await tgz({
    "package.json": '{"name":"fault-asn"}',
    "asn-ipv4.csv": asnCsv(),
    "asn-ipv6.csv": "",
  });
  const files = new Map<string, Uint8Array>([
    ["/fault-city/-/fault-city-1.0.0.tgz", city],
    ["/fault-asn/-/fault-asn-1.0.0.tgz", asn],
    ["/fault-city", new TextEncoder().encode('{"time":{"1.0.0":"2026-01-01T00:00:00Z"}}')],
    ["/fault-asn", new TextEncoder().encode('{"time":{"1.0.0":"2026-01-01T00:00:00Z"}}')],
    ["/tor.txt", new TextEncoder().encode("185.220.101.1\n185.220.101.2\n")],
  ]);
  const routes = new Map<string, (request: Request) => Response | Promise<Response>>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    const route = routes.get(path);
    if (route) return route(request);
    const body = files.get(path);
    return body ? new Response(body.slice()) : new Response("not found", { status: 404 });
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  const common = { license: "test", attribution: "test" };
  return {
    url,
    routes,
    async sourcesFile(dir, more = []) {
      const path = `${dir}/sources.json`;
      await Deno.writeTextFile(
        path,
        JSON.stringify({
          registry: url,
          sources: [
            {
              name: "city",
              kind: "city",
              format: "npm",
              url: "npm:fault-city@1.0.0",
              integrity: integrity(city),
              members: ["package/City.mmdb.gz"],
              file: "GeoLite2-City.mmdb",
              ...common,
            },
            {
              name: "asn",
              kind: "asn",
              format: "npm",
              url: "npm:fault-asn@1.0.0",
              integrity: integrity(asn),
              members: ["package/asn-ipv4.csv", "package/asn-ipv6.csv"],
              file: "asn.mmdb",
              ...common,
            },
            { name: "tor", kind: "tor", format: "ip-list", url: `${url}/tor.txt`, ...common },
            ...more,
          ],
        }),
      );
      return path;
    },
    close: () => server.shutdown(),
  };
}

/** The environment of a CLI run on `dataDir` with `sources`. */
export const cliEnv = (dataDir: string, sources: string): Record<string, string> => ({
  IPINTEL_DATA_DIR: dataDir,
  IPINTEL_SOURCES: sources,
  IPINTEL_NPM_REGISTRY: JSON.parse(Deno.readTextFileSync(sources)).registry,
  IPINTEL_UPDATE_INTERVAL: "off",
  IPINTEL_UPDATE_TIMEOUT: "2",
  NO_COLOR: "1",
});

/** Every file the manifest names exists and matches its sha256; the problems found. */
export async function manifestProblems(dataDir: string): Promise<string[]> {
  let manifest;
  try {
    manifest = JSON.parse(await Deno.readTextFile(`${dataDir}/manifest.json`));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return []; // nothing installed yet: consistent
    return [`manifest unreadable: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  for (const entry of manifest.sources) {
    for (
      const [file, sha] of [[entry.file, entry.sha256], [
        entry.download?.file,
        entry.download?.sha256,
      ]]
    ) {
      if (!file) continue;
      try {
        const bytes = await Deno.readFile(`${dataDir}/${file}`);
        const actual = createHash("sha256").update(bytes).digest("hex");
        if (sha && actual !== sha) problems.push(`${file}: sha256 mismatch`);
      } catch {
        problems.push(`${file}: missing`);
      }
    }
  }
  return problems;
}
