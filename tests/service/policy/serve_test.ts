/** `ipintel serve` with IPINTEL_POLICY: a bad policy stops the start with exit 2 naming the rule. */

import assert from "node:assert/strict";
import { runCli } from "../../_cli.ts";
import { writeFixtureDataDir } from "../../_helpers.ts";

Deno.test("a policy with a misspelt field stops the server with exit 2 naming the rule", async () => {
  const dataDir = await writeFixtureDataDir();
  try {
    const policy = `${dataDir}/policy.json`;
    await Deno.writeTextFile(
      policy,
      JSON.stringify({
        default: "allow",
        rules: [
          { name: "office", action: "allow", cidr: ["203.0.113.0/24"] },
          { name: "embargo", action: "deny", countries: ["KP"] },
        ],
      }),
    );
    const env = {
      IPINTEL_DATA_DIR: dataDir,
      IPINTEL_POLICY: policy,
      IPINTEL_KV: ":memory:",
      IPINTEL_WORKERS: "1",
      IPINTEL_UPDATE_INTERVAL: "off",
    };
    const { code, stdout, stderr } = await runCli(["serve", "--port", "0"], env);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, "");
    assert.match(
      stderr,
      /^ipintel serve: IPINTEL_POLICY ".*policy\.json": rule 2 "embargo": unknown field "countries" \(did you mean "country"\?\)/,
    );
    assert.doesNotMatch(stderr, /listening/); // refused before anything opened

    // The same through the flag, with a file that is not there.
    const missing = await runCli(["serve", "--port", "0", "--policy", `${dataDir}/nope.json`], {
      ...env,
      IPINTEL_POLICY: "",
    });
    assert.equal(missing.code, 2, missing.stderr);
    assert.match(missing.stderr, /Cannot read IPINTEL_POLICY ".*nope\.json": No such file/);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
