/**
 * Graceful shutdown over a real socket: `ipintel serve` as a subprocess gets
 * SIGTERM while a request is in flight (a POST /bulk whose body the client
 * is still sending), stops accepting, answers that request, writes the rate
 * counts to the KV and exits 0.
 */

import { counterId } from "../../../src/service/keys_limits/rate_limiter.ts";
import assert from "node:assert/strict";
import { writeFixtureDataDir } from "../../_helpers.ts";
import { readToClose, startServe, unchunk, waitFor } from "../../_serve_process.ts";

const MODES = [
  { httpServer: "deno", workers: 1 },
  { httpServer: "deno", workers: 2 },
  { httpServer: "node", workers: 1 },
] as const;

for (const { httpServer, workers } of MODES) {
  Deno.test(`SIGTERM with a request in flight: it is answered, then exit 0 (${httpServer} server, ${workers} worker(s))`, async () => {
    const dataDir = await writeFixtureDataDir();
    const kvPath = `${dataDir}/test.kv`;
    const server = await startServe({
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_KV: kvPath,
      IPINTEL_HTTP_SERVER: httpServer,
      IPINTEL_WORKERS: String(workers),
      IPINTEL_AUTH: "optional",
      IPINTEL_ANON_RATE_LIMIT: "1000",
      IPINTEL_SHUTDOWN_TIMEOUT: "20",
      IPINTEL_LOG: "off",
    });
    const exited = server.child.status;
    try {
      // The slow request: headers and half the body now, the rest after SIGTERM.
      const body = JSON.stringify({ ips: ["81.2.69.142", "2a02:ec0::1"] });
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
      const head = "POST /bulk?get=countryCode HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
      await conn.write(new TextEncoder().encode(head + body.slice(0, 10)));
      await new Promise((resolve) => setTimeout(resolve, 200));

      server.child.kill("SIGTERM");
      await waitFor(() => /SIGTERM: stopping/.test(server.stderr()));
      if (httpServer === "node") {
        // node:http stops accepting at once.
        await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port: server.port }));
      } else {
        // Deno.serve keeps accepting until no handler runs (denoland/deno#36809),
        // and what it accepts meanwhile is answered, not dropped.
        const meanwhile = await fetch(`http://127.0.0.1:${server.port}/ip/81.2.69.142`);
        assert.equal(meanwhile.status, 200);
        assert.equal((await meanwhile.json()).data.geoLocation.countryCode, "GB");
      }

      await conn.write(new TextEncoder().encode(body.slice(10)));
      const response = await readToClose(conn);
      conn.close();
      assert.match(response, /^HTTP\/1\.1 200 /, server.stderr());
      // POST /bulk streams its answer: chunked.
      assert.match(response, /\r\ntransfer-encoding: chunked\r\n/i);
      assert.deepEqual(JSON.parse(unchunk(response.slice(response.indexOf("\r\n\r\n") + 4))).data, {
        responseArray: [
          { ip: "81.2.69.142", countryCode: "GB" },
          { ip: "2a02:ec0::1", countryCode: "DE" },
        ],
      });

      const status = await exited;
      assert.equal(status.code, 0, server.stderr());
      assert.match(server.stderr(), /SIGTERM: stopping; 1 request\(s\) in flight/);
      assert.match(server.stderr(), /ipintel: stopped/);

      // Every address charged to the keyless caller reached the KV.
      const kv = await Deno.openKv(kvPath);
      try {
        let counted = 0;
        // Counts are grouped in shards by the caller's counter id (src/data/store/rate_counts.ts).
        for await (const entry of kv.list<Record<string, number>>({ prefix: ["rate"] })) {
          counted += entry.value[counterId("ip:127.0.0.1")] ?? 0;
        }
        assert.equal(counted, httpServer === "node" ? 2 : 3);
      } finally {
        kv.close();
      }
    } finally {
      await server.kill();
      await Deno.remove(dataDir, { recursive: true });
    }
  });
}
