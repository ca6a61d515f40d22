import assert from "node:assert/strict";
import { lockDataDir } from "../../../src/data/update/lock.ts";
import { unreachableCause } from "../../../src/data/update/download.ts";
import {
  type FeedServer,
  feedSource,
  startFeedServer,
  update,
  writeBaseDataDir,
} from "./_feed_server.ts";

/** A port on 127.0.0.1 that refuses connections: listened on, then closed. */
function refusingPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** fetch, counting the calls per host. */
function countingFetch() {
  const calls = new Map<string, number>();
  const fetchFn: typeof fetch = (input, init) => {
    const host = new URL(String(input)).host;
    calls.set(host, (calls.get(host) ?? 0) + 1);
    return fetch(input, init);
  };
  return { calls, fetchFn };
}

Deno.test("a host that does not resolve or refuses is tried once per update, and said once per source", async () => {
  const dataDir = await writeBaseDataDir();
  const port = refusingPort();
  try {
    const source = (name: string, url: string) => ({
      name,
      kind: "tor" as const,
      format: "ip-list" as const,
      url,
      license: "test",
      attribution: "test",
    });
    const sources = [
      source("no-dns-1", "http://feeds.ipintel-test.invalid/a.txt"),
      source("no-dns-2", "http://feeds.ipintel-test.invalid/b.txt"),
      source("refused-1", `http://127.0.0.1:${port}/a.txt`),
      source("refused-2", `http://127.0.0.1:${port}/b.txt`),
    ];
    const { calls, fetchFn } = countingFetch();
    const { outcomes, progress } = await update(dataDir, sources, { fetchFn, attempts: 3 });
    assert.deepEqual(outcomes.map((o) => o.status), ["failed", "failed", "failed", "failed"]);
    assert.equal(calls.get("feeds.ipintel-test.invalid"), 1, "no retry, no second lookup");
    assert.equal(calls.get(`127.0.0.1:${port}`), 1, "no retry, no second connection");
    assert.match(outcomes[0]!.detail, /feeds\.ipintel-test\.invalid does not resolve/);
    assert.match(
      outcomes[1]!.detail,
      /not tried: feeds\.ipintel-test\.invalid does not resolve \(seen earlier in this update\)$/,
    );
    assert.match(outcomes[2]!.detail, new RegExp(`127\\.0\\.0\\.1:${port} refused the connection`));
    assert.equal(progress.length, 4, "one line per failed source");
    assert.ok(progress.every((line) => /: FAILED: /.test(line)));
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("unreachableCause() tells a closed network from a failure worth retrying", () => {
  const dns =
    "fetch failed: error sending request for url (https://x.example/): client error (Connect): dns error: failed to lookup address information: Name or service not known";
  assert.match(unreachableCause(dns, "x.example")!, /^x\.example does not resolve/);
  assert.match(
    unreachableCause("tcp connect error: Connection refused (os error 111)", "h:1")!,
    /refused/,
  );
  assert.match(unreachableCause("Network is unreachable (os error 101)", "h")!, /no route/);
  assert.equal(unreachableCause("connection reset by peer", "h"), null);
  assert.equal(unreachableCause("invalid peer certificate: Expired", "h"), null);
});

Deno.test("an update holds no lock while it downloads: another writer gets it at once", async () => {
  const server: FeedServer = startFeedServer();
  const dataDir = await writeBaseDataDir();
  try {
    server.routes.set("/slow.txt", { hang: true });
    let downloading!: () => void;
    const started = new Promise<void>((resolve) => downloading = resolve);
    const fetchFn: typeof fetch = (input, init) => {
      if (String(input).endsWith("/slow.txt")) downloading();
      return fetch(input, init);
    };
    const stop = new AbortController();
    const running = update(dataDir, [feedSource(server, "slow", "tor", "/slow.txt")], {
      fetchFn,
      signal: stop.signal,
    }).catch((error) => error);
    await started;
    // While the download hangs, the data directory's lock is free.
    const lock = await lockDataDir(dataDir, { purpose: "data", wait: false });
    lock.release();
    stop.abort();
    assert.match(String(await running), /cancelled/);
  } finally {
    await server.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
