import assert from "node:assert/strict";
import { startHotReload } from "../../../src/process/server/reload.ts";
import { createSharedParts, openServed } from "../../../src/process/server/served.ts";
import { type Config, loadConfig } from "../../../src/base/config.ts";
import type { ServedSlot } from "../../../src/service/http/env.ts";
import { feedSource, startFeedServer, update, writeBaseDataDir } from "../update/_feed_server.ts";
import { fixtureApp } from "../../_helpers.ts";

const FIXTURES = new URL("../../fixtures/feeds/", import.meta.url).pathname;
const TOR_V1 = Deno.readTextFileSync(`${FIXTURES}tor_bulk_exit_list.txt`);
// Two addresses that join the list together in version 2.
const X = "198.51.100.7";
const Y = "198.51.100.9";
const TOR_V2 = `${TOR_V1}${X}\n${Y}\n`;

Deno.test("a running server swaps in new data within 5 s, with no failed or mixed answer", async () => {
  const server = startFeedServer();
  const dataDir = await writeBaseDataDir();
  const sourcesFile = `${dataDir}/sources.json`;
  const source = feedSource(server, "tor-exits", "tor", "/tor.txt");
  await Deno.writeTextFile(sourcesFile, JSON.stringify({ sources: [source] }));
  server.routes.set("/tor.txt", { body: TOR_V1 });
  await update(dataDir, [source]);

  const config = loadConfig({ IPINTEL_DATA_DIR: dataDir, IPINTEL_SOURCES: sourcesFile });
  const { services, log, watch } = await watchedServices(config);
  const app = await fixtureApp({ slot: services, config: { bulkMax: 10 } });
  try {
    const answers = { requests: 0, failures: [] as string[], mixed: 0, old: 0, new: 0 };
    let done = false;
    const client = async () => {
      while (!done) {
        const res = await app.request(`/bulk/${X},${Y}`);
        answers.requests++;
        if (res.status !== 200) {
          answers.failures.push(`${res.status} ${await res.text()}`);
          continue;
        }
        const items = (await res.json()).data.responseArray as { security: { isTor: boolean } }[];
        const [x, y] = items.map((item) => item.security.isTor);
        if (x !== y) answers.mixed++;
        else if (x) answers.new++;
        else answers.old++;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    };
    const clients = Array.from({ length: 4 }, client);
    while (answers.old === 0) await new Promise((resolve) => setTimeout(resolve, 10));

    server.routes.set("/tor.txt", { body: TOR_V2 });
    const { outcomes } = await update(dataDir, [source]);
    assert.equal(outcomes[0]!.status, "updated");
    const deadline = Date.now() + 5000;
    while (answers.new === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    done = true;
    await Promise.all(clients);
    assert.ok(answers.new > 0, `the new list was not served within 5 s (${JSON.stringify(log)})`);
    assert.deepEqual(answers.failures, []);
    assert.equal(answers.mixed, 0, "a bulk answer mixed the old and the new data");
    assert.ok(answers.requests > answers.new, "requests ran while the data changed");
    assert.ok(log.some((l) => l.startsWith("ipintel: new data loaded")), log.join("\n"));
  } finally {
    watch.close();
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("a new data set that fails validation is not swapped in, and the reason is logged", async () => {
  const dataDir = await writeBaseDataDir();
  const sourcesFile = `${dataDir}/sources.json`;
  await Deno.writeTextFile(sourcesFile, JSON.stringify({ sources: [] }));
  const config = loadConfig({ IPINTEL_DATA_DIR: dataDir, IPINTEL_SOURCES: sourcesFile });
  const { services, log, watch } = await watchedServices(config, 200);
  const before = services.current;
  try {
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A manifest naming a database whose bytes are not a MaxMind DB.
    await Deno.writeTextFile(`${dataDir}/broken.mmdb`, "not a database");
    const manifest = JSON.parse(await Deno.readTextFile(`${dataDir}/manifest.json`));
    manifest.sources[0].file = "broken.mmdb";
    await Deno.writeTextFile(`${dataDir}/manifest.json`, JSON.stringify(manifest));
    const deadline = Date.now() + 5000;
    while (log.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(log.length, 1, "the change was noticed once");
    assert.match(log[0]!, /not loaded, still serving the previous set: .*broken\.mmdb/);
    assert.equal(services.current, before, "the previous set is still served");
  } finally {
    watch.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

/** The services of `config`'s data directory, swapped by a hot reload as `serve` does; its log lines. */
async function watchedServices(config: Config, pollMs?: number) {
  const shared = createSharedParts();
  const services: ServedSlot = { current: await openServed(config, shared) };
  const log: string[] = [];
  const watch = startHotReload(
    config,
    {
      load: () => openServed(config, shared),
      install: (next) => void (services.current = next),
    },
    (line) => log.push(line),
    { pollMs },
  );
  return { services, log, watch };
}
