/**
 * SIGTERM (a service manager's stop) and SIGINT (Ctrl-C) stop `data` and `data update`
 * promptly, mid-download and mid-compile, leaving no partial file and the installed set
 * whole. The time from the signal to the exit is printed (no threshold: the machine is
 * shared), next to the 30 s a systemd unit waits before SIGKILL.
 */

import assert from "node:assert/strict";
import { cliEnv, manifestProblems, runCli, spawnCli, startFaultServer } from "./_data_fixture.ts";

Deno.test("data: SIGTERM and SIGINT stop data and data update, leaving no partial file", async () => {
  const server = await startFaultServer();
  const dir = await Deno.makeTempDir({ prefix: "ipintel-fault-signal-" });
  const hold = new AbortController();
  try {
    const dataDir = `${dir}/data`;
    await Deno.mkdir(dataDir);
    // A feed that sends a first line, then nothing (held open): `data update` waits on it.
    server.routes.set("/stalled-feed.txt", () =>
      new Response(
        new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode("192.0.2.1\n"));
            hold.signal.addEventListener("abort", () => {
              try {
                c.close();
              } catch { /* the client went away */ }
            });
          },
        }),
      ));
    const sources = await server.sourcesFile(dir);
    const env = { ...cliEnv(dataDir, sources), IPINTEL_UPDATE_TIMEOUT: "600" };
    assert.equal((await runCli(["data"], env)).code, 0);
    const stalledSources = await server.sourcesFile(dir, [{
      name: "stalled-feed",
      kind: "vpn",
      format: "ip-list",
      url: `${server.url}/stalled-feed.txt`,
      license: "test",
      attribution: "test",
    }]);
    const figures: string[] = [];
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      for (const command of [["data", "--force"], ["data", "update"]]) {
        const child = spawnCli(command, { ...env, IPINTEL_SOURCES: stalledSources });
        // Wait until it is busy: the progress line of the download or compile.
        let stderr = "";
        const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
        const deadline = Date.now() + 60_000;
        while (!/data: (downloading|decompressing|compiling)|update: city/.test(stderr)) {
          if (Date.now() > deadline) throw new Error(`never busy:\n${stderr}`);
          const { value, done } = await reader.read();
          if (done) break;
          stderr += value;
        }
        const sent = performance.now();
        child.kill(signal);
        const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
        const status = await child.status;
        const seconds = (performance.now() - sent) / 1000;
        clearTimeout(killer);
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          stderr += value;
        }
        assert.notEqual(status.signal, "SIGKILL", `${command.join(" ")}: not stopped\n${stderr}`);
        assert.match(stderr, /cancelled/, stderr);
        const leftovers = [...Deno.readDirSync(dataDir)].map((e) => e.name)
          .filter((n) => /\.tmp-\d+$|^\.download-/.test(n));
        assert.deepEqual(leftovers, [], "no partial file");
        assert.deepEqual(await manifestProblems(dataDir), []);
        figures.push(`${command.join(" ")} on ${signal}: exited ${seconds.toFixed(2)} s after it`);
      }
    }
    console.log(`data signals: ${figures.join("; ")} (systemd waits 30 s)`);
  } finally {
    hold.abort();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
