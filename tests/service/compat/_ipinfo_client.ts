/**
 * Runs ipinfo's official Node client (`node-ipinfo`, unchanged) against a base
 * URL and prints what it returns, one JSON line: run by clients_test.ts as
 * `NODE_EXTRA_CA_CERTS=<ca> deno run _ipinfo_client.ts <baseUrl> <token> <request JSON>`:
 * the client's own HTTPS stack (node-fetch on node:https) trusts the test CA through
 * Node's extra-CA variable, which Deno's node:https honours.
 * A request is `{"lookup": "<ip>"}` or `{"batch": ["<path>", ...]}`.
 */

import { ApiLimitError, IPinfoWrapper } from "node-ipinfo";

const [baseUrl, token, requestText] = Deno.args;
const request = JSON.parse(requestText!) as { lookup?: string; batch?: string[] };
const client = new IPinfoWrapper(token!, undefined, 5000, undefined, baseUrl);
try {
  const value = request.lookup !== undefined
    ? await client.lookupIp(request.lookup)
    : await client.getBatch(request.batch!);
  console.log(JSON.stringify({ value }));
} catch (error) {
  const limit = error instanceof ApiLimitError;
  console.log(JSON.stringify({ error: (error as Error).message, limit }));
}
