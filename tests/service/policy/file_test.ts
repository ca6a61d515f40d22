/**
 * The policy file: read and checked at start, watched afterwards. A good new
 * file is served, a bad one refused (reported once) with the old policy kept.
 */

import { servedOf } from "../../../src/service/http/env.ts";
import assert from "node:assert/strict";
import { waitFor } from "../../_serve_process.ts";
import { fixtureLookup } from "../../_helpers.ts";
import {
  duplicateKey,
  policyStatus,
  readPolicyFile,
  versionOf,
} from "../../../src/service/policy/file.ts";
import { PolicyGate } from "../../../src/service/policy/gate.ts";
import { PolicyError } from "../../../src/service/policy/policy.ts";
import { gateDataSet } from "./_gate_data.ts";

const embargo = (country: string) =>
  JSON.stringify({
    default: "allow",
    rules: [
      { name: "no-tor", action: "deny", security: ["tor"] },
      { name: "embargo", action: "deny", country: [country] },
    ],
  });

/** Replaces the file in one step, as an editor or a config manager does (a poll never reads half of it). */
async function replace(path: string, text: string) {
  await Deno.writeTextFile(`${path}.next`, text);
  await Deno.rename(`${path}.next`, path);
}

async function withFile(test: (path: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-policy-" });
  try {
    await test(`${dir}/policy.json`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("readPolicyFile(): the version is the content's hash; a bad file names itself", async () => {
  await withFile(async (path) => {
    await Deno.writeTextFile(path, embargo("KP"));
    const loaded = await readPolicyFile(path, () => new Date("2026-11-26T12:00:00Z"));
    assert.equal(loaded.version, versionOf(new TextEncoder().encode(embargo("KP"))));
    assert.match(loaded.version, /^[0-9a-f]{12}$/);
    assert.deepEqual(policyStatus(loaded), {
      file: path,
      version: loaded.version,
      loadedAt: "2026-11-26T12:00:00.000Z",
      default: "allow",
      rules: 2,
      cacheSeconds: 0,
    });

    const refused = async (content: string | null, message: RegExp) => {
      if (content === null) await Deno.remove(path).catch(() => {});
      else await Deno.writeTextFile(path, content);
      await assert.rejects(() => readPolicyFile(path), (error: unknown) => {
        assert.ok(error instanceof PolicyError, String(error));
        assert.ok(error.message.includes(`IPINTEL_POLICY "${path}"`), error.message);
        assert.match(error.message, message);
        return true;
      });
    };
    await refused('{"default": "allow", "rules": [', /not valid JSON/);
    await refused("", /not valid JSON/);
    await refused(embargo("ZZ"), /rule 2 "embargo": "country": "ZZ" is not a known/);
    await refused(null, /Cannot read/);
  });
});

Deno.test("a directory or a huge file is refused before it is read", async () => {
  await withFile(async (path) => {
    await Deno.mkdir(path);
    await assert.rejects(() => readPolicyFile(path), /is not a file/);
    await Deno.remove(path);
    await Deno.writeFile(path, new Uint8Array((1 << 20) + 1));
    await assert.rejects(
      () => readPolicyFile(path),
      /is 1048577 bytes: a policy is at most 1048576/,
    );
  });
});

Deno.test("an edited policy is served without a restart; a bad one is refused and the old kept", async () => {
  const data = await gateDataSet();
  const served = servedOf(data, await fixtureLookup(undefined, data));
  await withFile(async (path) => {
    await Deno.writeTextFile(path, embargo("US"));
    const lines: string[] = [];
    const gate = await PolicyGate.open(path, { report: (line) => lines.push(line), pollMs: 5 });
    try {
      const first = gate.loaded.version;
      assert.equal(gate.answer(served, "8.8.8.8").status, 403);
      assert.equal(gate.answer(served, "81.2.69.160").status, 204);

      // Rewritten to embargo GB instead (same size: only the content says it changed).
      await replace(path, embargo("GB"));
      await waitFor(() => gate.loaded.version !== first);
      assert.equal(gate.answer(served, "8.8.8.8").status, 204);
      const gb = gate.decide(served, "81.2.69.160");
      assert.equal(gb.rule, "embargo");
      assert.equal(gb.headers["X-IP-Country"], "GB");
      assert.match(
        lines.at(-1)!,
        /policy reloaded from .*policy\.json \(version [0-9a-f]{12}, 2 rules\)/,
      );

      // A misspelt field: refused, reported once, the GB policy still served.
      const kept = gate.loaded.version;
      const bad = embargo("KP").replace('"security"', '"securty"');
      const before = lines.length;
      await replace(path, bad);
      await waitFor(() => lines.length > before);
      assert.match(
        lines.at(-1)!,
        new RegExp(
          `policy file changed but not reloaded, still serving version ${kept}: .*rule 1 "no-tor": unknown field "securty"`,
        ),
      );
      assert.equal(gate.loaded.version, kept);
      assert.equal(gate.answer(served, "81.2.69.160").status, 403);
      const reported = lines.length;

      // A half-written file, then the file gone: each reported, nothing served changes.
      await replace(path, embargo("KP").slice(0, 40));
      await waitFor(() => lines.length > reported);
      assert.match(lines.at(-1)!, /not valid JSON/);
      await Deno.remove(path);
      await waitFor(() => lines.length > reported + 1);
      assert.match(lines.at(-1)!, /Cannot read/);
      assert.equal(gate.loaded.version, kept);

      // Fixed: served at once.
      await replace(path, embargo("KP"));
      await waitFor(() => gate.loaded.version !== kept);
      assert.equal(gate.answer(served, "81.2.69.160").status, 204);
      assert.equal(gate.answer(served, "175.45.176.1").status, 403);

      // The counts follow every decision, by rule and action.
      assert.deepEqual(Object.fromEntries(gate.counter.snapshot()), {
        embargo: { allow: 0, deny: 4, report: 0 },
        default: { allow: 3, deny: 0, report: 0 },
      });
    } finally {
      gate.close();
    }
  });
});

Deno.test("the same content written again is not a reload", async () => {
  await withFile(async (path) => {
    await Deno.writeTextFile(path, embargo("KP"));
    const lines: string[] = [];
    const gate = await PolicyGate.open(path, { report: (line) => lines.push(line), pollMs: 5 });
    try {
      const loadedAt = gate.loaded.loadedAt;
      await Deno.utime(path, new Date(), new Date("2030-01-01T00:00:00Z")); // touched: the same bytes
      await replace(path, embargo("IR")); // then a new policy, to know the poll has run
      await waitFor(() => lines.length > 0);
      assert.equal(lines.length, 1, lines.join("\n"));
      assert.notEqual(gate.loaded.loadedAt, loadedAt);
      assert.deepEqual([...gate.loaded.policy.rules[1]!.country!], ["IR"]);
    } finally {
      gate.close();
    }
  });
});

Deno.test("PolicyGate.open() refuses a bad file at start (the CLI's exit 2)", async () => {
  await withFile(async (path) => {
    await Deno.writeTextFile(path, embargo("KP").replace('"action"', '"acton"'));
    await assert.rejects(
      () => PolicyGate.open(path, { report: () => {} }),
      /rule 1 "no-tor": unknown field "acton" \(did you mean "action"\?\)/,
    );
  });
});

Deno.test("a key given twice in one object is refused at load, naming the key and where", async () => {
  await withFile(async (path) => {
    const cases: [string, RegExp][] = [
      ['{"default":"allow","default":"deny"}', /duplicate key "default" at the top level/],
      [
        '{"default":"allow","rules":[{"name":"a","action":"deny","country":["KP"]},' +
        '{"name":"b","action":"deny","action":"allow","country":["IR"]}]}',
        /duplicate key "action" in rule 2:/,
      ],
      // Compared as decoded: JSON.parse reads both as "default".
      ['{"default":"deny","\\u0064efault":"allow"}', /duplicate key "default" at the top level/],
    ];
    for (const [text, message] of cases) {
      await Deno.writeTextFile(path, text);
      await assert.rejects(() => readPolicyFile(path), (error: unknown) => {
        assert.ok(error instanceof PolicyError, String(error));
        assert.ok(
          error.message.startsWith(`IPINTEL_POLICY "${path}": duplicate key`),
          error.message,
        );
        assert.match(error.message, message);
        assert.match(error.message, /JSON keeps only the last one/);
        return true;
      });
    }
    // Equal keys in different objects, and equal strings as values, are fine.
    await Deno.writeTextFile(
      path,
      '{"default":"allow","rules":[{"name":"name","action":"deny","country":["KP"]},' +
        '{"name":"b","action":"deny","country":["IR"],"description":"\\"name\\": a \\\\ quote"}]}',
    );
    assert.equal((await readPolicyFile(path)).policy.rules.length, 2);
  });
});

Deno.test("duplicateKey() walks nesting of any depth without recursion", () => {
  const deep = "[".repeat(100_000) + '{"a":1,"a":2}' + "]".repeat(100_000);
  assert.deepEqual(duplicateKey(deep)?.key, "a");
  assert.equal(duplicateKey('{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}'), null);
  assert.deepEqual(duplicateKey('{"x":{"y":[0,{"k":1,"k":2}]}}'), {
    key: "k",
    where: 'in "x" → "y" → 1',
  });
});
