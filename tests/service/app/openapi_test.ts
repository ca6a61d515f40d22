import { pythonWith } from "../../_python.ts";
import { ignoredName } from "../../_skip.ts";
/**
 * The served OpenAPI document against real responses, checked by an independent
 * JSON Schema 2020-12 validator (Python's jsonschema): every field of every answer
 * validates (types, nullability, no key missing, none extra), and every status a
 * route answered is one the document lists for that route.
 */

import assert from "node:assert/strict";
import denoJson from "../../../deno.json" with { type: "json" };
import { AccessControl } from "../../../src/service/keys_limits/access_control.ts";
import { KeyTable } from "../../../src/service/keys_limits/key_table.ts";
import { RateLimiter } from "../../../src/service/keys_limits/rate_limiter.ts";
import { createLookup } from "../../../src/core/lookup/lookup.ts";
import { openDataSet } from "../../../src/data/sources/data_set.ts";
import { MemoryKeyStore } from "../../../src/data/store/keys.ts";
import { MemoryRateCounters } from "../../../src/data/store/rate_counts.ts";
import { createUserAgentParser } from "../../../src/core/ua/parse.ts";
import { CHROME, DEFAULT_DATA_DIR, FIXED_NOW, fixtureApp, peer } from "../../_helpers.ts";
import { ROUTES } from "../../../src/service/app/app.ts";
import { KEY_SECURITY, openApiDocument } from "../../../src/service/app/openapi.ts";

const config = { bulkMax: 3, trustedProxies: ["127.0.0.0/8"] };

/** One request: the route template it hits, and the schema its JSON body must satisfy. */
interface Case {
  route: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  from?: string;
  schema: string;
}

const CASES: Case[] = [
  {
    route: "/ip/{ip}",
    path: "/ip/81.2.69.142",
    headers: { "user-agent": CHROME },
    schema: "Envelope",
  },
  { route: "/ip/{ip}", path: "/ip/2a02:ec0::1", schema: "Envelope" },
  { route: "/ip/{ip}", path: "/ip/1.1.1.1", schema: "Envelope" }, // registered country only
  { route: "/ip/{ip}", path: "/ip/9.9.9.9", schema: "Envelope" }, // ASN only: mostly null
  { route: "/ip/{ip}", path: "/ip/10.1.2.3", schema: "Envelope" },
  {
    route: "/ip/{ip}",
    path: "/ip/81.2.69.142?get=city,currency.code,security",
    schema: "Envelope",
  },
  {
    route: "/ip/{ip}",
    method: "POST",
    path: "/ip/81.2.69.142",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ userAgent: CHROME }),
    schema: "Envelope",
  },
  { route: "/me", path: "/me", from: "81.2.69.142", schema: "Envelope" },
  { route: "/bulk/{ip_list}", path: "/bulk/81.2.69.142,1.2.3,9.9.9.9", schema: "BulkEnvelope" },
  {
    route: "/bulk",
    method: "POST",
    path: "/bulk?get=asn_number",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ips: ["9.9.9.9", "192.0.2.1"] }),
    schema: "BulkEnvelope",
  },
  // Errors: each status must be listed for its route.
  { route: "/ip/{ip}", path: "/ip/1.2.3", schema: "Error" },
  { route: "/ip/{ip}", path: "/ip/81.2.69.142?get=nope", schema: "Error" },
  { route: "/ip/{ip}", path: "/ip/81.2.69.142", headers: { host: "a b" }, schema: "Error" },
  {
    route: "/ip/{ip}",
    method: "POST",
    path: "/ip/81.2.69.142",
    headers: { "content-type": "text/plain" },
    body: "x",
    schema: "Error",
  },
  {
    route: "/ip/{ip}",
    method: "POST",
    path: "/ip/81.2.69.142",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ userAgent: "x".repeat(9000) }),
    schema: "Error",
  },
  {
    route: "/me",
    path: "/me",
    from: "127.0.0.1",
    headers: { "x-forwarded-for": "8.8.8.8x" },
    schema: "Error",
  },
  // Past IPINTEL_BULK_MAX (3 here), a GET list is streamed: the same envelope.
  {
    route: "/bulk/{ip_list}",
    path: "/bulk/1.1.1.1,2.2.2.2,3.3.3.3,4.4.4.4",
    schema: "BulkEnvelope",
  },
  {
    route: "/bulk",
    method: "POST",
    path: "/bulk",
    headers: { "content-type": "text/plain" },
    body: "81.2.69.142\nnope\n",
    schema: "BulkEnvelope",
  },
  {
    route: "/bulk",
    method: "POST",
    path: "/bulk",
    headers: { "content-type": "application/xml" },
    body: "{}",
    schema: "Error",
  },
  { route: "/health", path: "/health", headers: { host: "x:99999" }, schema: "Error" },
  { route: "/openapi.json", path: "/openapi.json", headers: { host: "[::1" }, schema: "Error" },
];

type Observed = {
  name: string;
  route: string;
  method: string;
  status: number;
  schema: string;
  instance: unknown;
};

async function observe(
  fetch: (request: Request, env: ReturnType<typeof peer>) => Response | Promise<Response>,
  c: Case,
): Promise<Observed> {
  const method = c.method ?? "GET";
  const response = await fetch(
    new Request(`http://localhost${c.path}`, {
      method,
      headers: { host: "localhost", ...c.headers },
      body: c.body,
    }),
    peer(c.from ?? "203.0.113.7"),
  );
  return {
    name: `${method} ${c.path} ${JSON.stringify(c.headers ?? {})}`.slice(0, 120),
    route: c.route,
    method,
    status: response.status,
    schema: c.schema,
    instance: await response.json(),
  };
}

const JSONSCHEMA_PYTHON = await pythonWith("from jsonschema import Draft202012Validator");
/** Why the tests that validate against the schemas are ignored here, or null. */
const NO_JSONSCHEMA = JSONSCHEMA_PYTHON
  ? null
  : "no python3 with jsonschema (apt install python3-jsonschema)";

/** Validates each instance against `#/components/schemas/<schema>` of `document`; returns the errors. */
async function validate(document: unknown, observed: Observed[]): Promise<string[]> {
  const script = `
import json, sys
from jsonschema import Draft202012Validator
given = json.load(sys.stdin)
doc = given["document"]
errors = []
for case in given["cases"]:
    schema = dict(doc)
    schema["$ref"] = "#/components/schemas/" + case["schema"]
    for e in Draft202012Validator(schema).iter_errors(case["instance"]):
        errors.append(case["name"] + ": " + "/".join(map(str, e.absolute_path)) + ": " + e.message[:200])
json.dump(errors, sys.stdout)
`;
  const child = new Deno.Command(JSONSCHEMA_PYTHON!, {
    args: ["-c", script],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  })
    .spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify({ document, cases: observed })));
  await writer.close();
  const output = await child.output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

function assertDocumented(document: OpenApi, observed: Observed[]) {
  for (const o of observed) {
    const responses = document.paths[o.route]?.[o.method.toLowerCase()]?.responses ?? {};
    assert.ok(
      String(o.status) in responses,
      `${o.name}: ${o.status} is not documented for ${o.method} ${o.route}`,
    );
  }
}

type OpenApi = {
  info: { version: string };
  paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
};

const VALIDATES = ignoredName(
  "every field of real answers validates against the served OpenAPI schemas",
  NO_JSONSCHEMA,
);
Deno.test(VALIDATES, { ignore: !!NO_JSONSCHEMA }, async () => {
  const app = await fixtureApp({ config });
  const document = await (await app.request("/openapi.json")).json() as OpenApi;
  assert.equal(document.info.version, denoJson.version);
  const observed: Observed[] = [];
  for (const c of CASES) observed.push(await observe(app.fetch, c));
  // Where the whole result is answered, it must be the full LookupResult, not just "an object".
  for (const o of observed) {
    const data = (o.instance as { data?: { geoLocation?: unknown } }).data;
    if (o.schema === "Envelope" && data?.geoLocation) {
      observed.push({ ...o, name: `${o.name} (data)`, schema: "LookupResult", instance: data });
    }
  }
  assert.ok(observed.filter((o) => o.schema === "LookupResult").length >= 7);
  assert.deepEqual(await validate(document, observed), []);
  assertDocumented(document, observed);
  // The same checks catch a schema that is wrong: a null where none is allowed fails.
  const broken = structuredClone(observed.find((o) => o.schema === "LookupResult")!);
  (broken.instance as { geoLocation: { is_in_eu: unknown } }).geoLocation.is_in_eu = null;
  (broken.instance as { extra?: number }).extra = 1;
  const errors = await validate(document, [broken]);
  assert.equal(errors.length, 2, errors.join("\n"));
});

const ERRORS_VALIDATE = ignoredName(
  "401, 429 and 503 on lookup routes are documented and answer the Error schema",
  NO_JSONSCHEMA,
);
Deno.test(ERRORS_VALIDATE, { ignore: !!NO_JSONSCHEMA }, async () => {
  const store = new MemoryKeyStore();
  await store.create({ name: "one" });
  const keys = new KeyTable(store);
  await keys.refresh();
  const limiter = new RateLimiter({ counters: new MemoryRateCounters(), now: () => 1_000_000 });
  const access = new AccessControl(
    { auth: "optional", rateLimit: 5, rateWindow: 60, anonRateLimit: 1 },
    keys,
    limiter,
  );
  const app = await fixtureApp({ config, access });
  const document = await (await app.request("/openapi.json")).json() as OpenApi;
  const observed: Observed[] = [];
  const ip: Case = { route: "/ip/{ip}", path: "/ip/81.2.69.142", schema: "Envelope" };
  observed.push(await observe(app.fetch, ip)); // the one anonymous unit
  observed.push(await observe(app.fetch, { ...ip, schema: "Error" })); // 429
  observed.push(
    await observe(app.fetch, { ...ip, headers: { "x-api-key": "ipi_wrong" }, schema: "Error" }),
  );
  observed.push(
    await observe(app.fetch, {
      ...ip,
      route: "/bulk/{ip_list}",
      path: "/bulk/9.9.9.9",
      headers: { authorization: "Bearer nope" },
      schema: "Error",
    }),
  );
  const loading = await fixtureApp({ slot: { current: null }, config });
  for (
    const c of [ip, { ...ip, route: "/ready", path: "/ready" }, {
      ...ip,
      route: "/status",
      path: "/status",
    }]
  ) {
    observed.push(await observe(loading.fetch, { ...c, schema: "Error" }));
  }
  assert.deepEqual(observed.map((o) => o.status), [200, 429, 401, 401, 503, 503, 503]);
  assert.deepEqual(await validate(document, observed), []);
  assertDocumented(document, observed);
});

const realData = await Deno.stat(`${DEFAULT_DATA_DIR}/manifest.json`).then(() => true, () => false);

Deno.test({
  name: ignoredName(
    "real data answers validate against LookupResult",
    realData ? NO_JSONSCHEMA : "the default data is not built (deno task data)",
  ),
  ignore: !realData || !!NO_JSONSCHEMA,
  fn: async () => {
    const app = await fixtureApp({ config });
    const document = await (await app.request("/openapi.json")).json();
    const lookup = createLookup({
      data: await openDataSet(DEFAULT_DATA_DIR),
      now: () => FIXED_NOW,
      parseUserAgent: createUserAgentParser(),
    });
    const ips = [
      "8.8.8.8",
      "81.2.69.142",
      "2001:4860:4860::8888",
      "1.1.1.1",
      "2002:808:808::1",
      "41.0.0.1",
      "200.1.2.3",
    ];
    const observed = ips.map((ip) => ({
      name: ip,
      route: "",
      method: "GET",
      status: 200,
      schema: "LookupResult",
      instance: lookup.find(ip, { userAgent: CHROME }),
    }));
    assert.deepEqual(await validate(document, observed), []);
  },
});

Deno.test("each operation's security comes from its route's access: the key schemes on a keyed route, the API's own on a compatible one, none on an open one", () => {
  const document = openApiDocument(ROUTES) as {
    paths: Record<string, Record<string, { security?: unknown }>>;
  };
  for (const route of ROUTES) {
    for (const method of route.methods) {
      const operation = document.paths[route.path]![method.toLowerCase()]!;
      const label = `${method} ${route.path} (${route.access})`;
      if (route.access === "key") assert.deepEqual(operation.security, KEY_SECURITY, label);
      else if (route.access === "own") assert.ok(Array.isArray(operation.security), label);
      else assert.equal(operation.security, undefined, label);
      // Declared once: the declaration's own doc says nothing of the key schemes.
      const declared = (route.doc as Record<string, { security?: unknown }>)[method.toLowerCase()];
      if (route.access === "key") assert.equal(declared?.security, undefined, label);
    }
  }
});
