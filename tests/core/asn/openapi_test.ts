import assert from "node:assert/strict";
import { ASN_OPENAPI_SCHEMAS, asnPathItem } from "../../../src/core/asn/openapi.ts";
import { createAsnView } from "../../../src/core/asn/view.ts";
import { asnDataSet } from "./_fixtures.ts";

Deno.test("the Asn schema names every key of an answer, with the types it has", async () => {
  const data =
    JSON.parse((await createAsnView().answer("100", await asnDataSet(), null, "json")).body).data;
  const schema = ASN_OPENAPI_SCHEMAS.Asn as {
    properties: Record<string, { type: unknown; properties?: Record<string, unknown> }>;
    required: string[];
  };
  assert.deepEqual(schema.required, Object.keys(data));
  assert.deepEqual(schema.properties.prefixes?.properties?.ipv4, {
    type: "array",
    items: { type: "string" },
    description: "The AS's IPv4 networks as collapsed CIDR blocks, in address order",
  });
  assert.deepEqual(
    Object.keys(schema.properties.counts?.properties ?? {}),
    Object.keys(data.counts),
  );
});

Deno.test("the /asn/{n} path item documents 200, 400, 404 and 429", () => {
  const item = asnPathItem({ rateLimitHeaders: {} }) as {
    get: { responses: Record<string, unknown> };
  };
  for (const status of ["200", "400", "404", "429"]) assert.ok(item.get.responses[status], status);
});
