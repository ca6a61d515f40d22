/**
 * The native API's routes, each declared once (src/service/http/route.ts):
 * path, methods, who may call, OpenAPI operations (openapi.ts) and handler.
 * Adding a route is one declaration here; the app registers it, reads its
 * key, answers its OPTIONS and 405s, counts and documents it.
 */

import { bearerMatches } from "../keys_limits/credentials.ts";
import { splitBulkList } from "../bulk/items.ts";
import { lookupItem } from "../../core/lookup/item.ts";
import { parseAsnSelection } from "../../core/asn/layout.ts";
import { asnCost, parseAsnFormat } from "../../core/asn/view.ts";
import { parseAt } from "../../data/history/at.ts";
import { AppError, BadRequestError } from "../../base/errors.ts";
import { renderError, renderLookup } from "../../core/format/mod.ts";
import { METRICS_CONTENT_TYPE } from "../../core/format/render.ts";
import { streamFormat } from "../../core/format/incremental.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import { redactUrl, sourceOrigin } from "../../data/sources/redact_url.ts";
import type { Json } from "../../base/types.ts";
import { acceptsHtml, type SiteAnswer } from "../web/site.ts";
import { type AppContext, bodyStream, FORMAT_HEADERS, type Served } from "../http/env.ts";
import { type LookupRequest, readLookupQuery, readLookupRequest } from "../http/lookup_request.ts";
import type { Handler, Route } from "../http/route.ts";
import { answerPath } from "../http/answer_path.ts";
import {
  bodyFormat,
  type BulkStreamRequest,
  streamBodyAnswer,
  streamListAnswer,
} from "./bulk_answer.ts";
import {
  ASN_DOC,
  ASSETS_DOC,
  AUTH_DOC,
  BULK_DOC,
  BULK_LIST_DOC,
  HEALTH_DOC,
  IP_DOC,
  MCP_DOC,
  ME_DOC,
  METRICS_DOC,
  OPENAPI_DOC,
  openApiDocument,
  PAGE_DOC,
  READY_DOC,
  STATUS_DOC,
} from "./openapi.ts";
import { answerKey, answerSecond } from "./answer_key.ts";
import { mcpHandler } from "./mcp_route.ts";
import { statusRoute } from "./status_route.ts";
import type { AppTools } from "./app_tools.ts";

/**
 * The answer path of one address (`/ip/{ip}`, `/me`, `/`), in answerPath's order: the parameters
 * (400), one unit charged (429), the data (503), then the answer. `address` is the address asked
 * for (null: the caller's own). Synchronous unless a JSON body is read or the charge waits for the
 * shared count: a GET answered at once makes no promise (bench/middleware_bench.ts).
 */
function addressPath(
  tools: AppTools,
  address: ((c: AppContext) => string) | null,
  identify?: (c: AppContext) => void,
): Handler {
  return answerPath<LookupRequest>(tools, {
    identify,
    // The address is read like any parameter: a missing one, or a malformed forwarding header
    // from a trusted proxy (the caller's address, resolved once), is a 400 before the charge.
    read: address === null
      ? (c) => {
        tools.client(c);
        return readLookupRequest(c);
      }
      : (c) => {
        address(c);
        return readLookupRequest(c);
      },
    cost: oneUnit,
    answer: address === null
      ? (c, p, served) => lookupAnswer(tools, c, tools.client(c), p, served)
      : (c, p, served) => lookupAnswer(tools, c, address(c), p, served),
  });
}

const oneUnit = () => 1;

function lookupAnswer(
  tools: AppTools,
  c: AppContext,
  addresses: string | string[],
  p: LookupRequest,
  served: Served,
) {
  // One data set for a whole list, even if a reload swaps it meanwhile.
  const lookup = served.lookup;
  const cache = tools.answerCache;
  if (cache !== null && typeof addresses === "string") {
    // A repeat answer is the same text: made once, then served from the cache (answer_cache.ts).
    const key = answerKey(addresses, p, lookup);
    const second = answerSecond(p.selection, Date.now());
    let body = cache.get(served, key, second);
    if (body === undefined) {
      body = renderLookup(lookup.find(addresses, p), p.selection, p.format);
      cache.set(served, key, body, second);
    }
    return c.body(body, 200, FORMAT_HEADERS[p.format]);
  }
  const data = typeof addresses === "string"
    ? lookup.find(addresses, p)
    : addresses.map((ip) => lookupItem(lookup, ip, p));
  return c.body(renderLookup(data, p.selection, p.format), 200, FORMAT_HEADERS[p.format]);
}

/** The address of `/ip/{ip}`; a 400 when it is missing. */
function ipParam(c: AppContext): string {
  const ip = c.req.param("ip");
  if (!ip) throw new BadRequestError("Missing IP address: use /ip/{ip}");
  return ip;
}

const siteResponse = (c: AppContext, answer: SiteAnswer) =>
  answer.body === null
    ? c.body(null, answer.status as 304, answer.headers)
    : c.body(answer.body, answer.status as 200, answer.headers);

export const NATIVE_ROUTES: readonly Route<AppTools>[] = [
  {
    path: "/ip/{ip}",
    methods: ["GET", "POST"],
    access: "key",
    doc: IP_DOC,
    handler: (tools) => addressPath(tools, ipParam),
  },
  {
    path: "/me",
    methods: ["GET"],
    access: "key",
    doc: ME_DOC,
    handler: (tools) => addressPath(tools, null),
  },
  {
    // Forward-auth: the caller (as /me reads it) and its User-Agent (a crawler's claim) judged
    // by the policy; one unit per decision.
    path: "/auth",
    methods: ["GET"],
    access: "key",
    doc: AUTH_DOC,
    handler: (tools) =>
      answerPath(tools, {
        read: (c) => {
          const gate = tools.deps.policy;
          if (!gate) throw new AppError("not_found", NO_POLICY_MESSAGE);
          tools.client(c); // the caller's address (resolved once): a bad forwarding header is a 400
          return gate;
        },
        cost: oneUnit,
        // A Response of its own (made once per distinct answer, then cloned): building
        // its several headers costs more than the decision.
        answer: (c, gate, served) =>
          gate.respond(served, tools.client(c), c.req.raw.headers.get("user-agent")),
      }),
  },
  {
    // Up to IPINTEL_BULK_MAX addresses answered whole; a longer list, or NDJSON, streamed.
    path: "/bulk/{ip_list}",
    methods: ["GET"],
    access: "key",
    doc: BULK_LIST_DOC,
    handler: (tools) =>
      answerPath(tools, {
        read: (c) => {
          const list = c.req.param("ip_list");
          if (!list) {
            throw new BadRequestError("Empty bulk list: use /bulk/{ip},{ip},... or POST /bulk");
          }
          const ips = splitBulkList(list);
          const format = streamFormat(c.req.query("format"), c.req.header("accept") ?? null);
          const whole = format !== "ndjson" && ips.length <= tools.bulkMax;
          const checked = <R>(request: R) => {
            if (ips.length === 0) {
              throw new BadRequestError("Empty bulk list: give at least one IP address");
            }
            return { ips, whole, request };
          };
          if (!whole) {
            return checked<LookupRequest | BulkStreamRequest>({ ...readLookupQuery(c), format });
          }
          const p = readLookupRequest(c);
          return p instanceof Promise
            ? p.then(checked<LookupRequest | BulkStreamRequest>)
            : checked<LookupRequest | BulkStreamRequest>(p);
        },
        // A whole answer, all or nothing; a stream, its first unit (each item pays for itself).
        cost: ({ ips, whole }) => whole ? ips.length : 1,
        answer: (c, { ips, whole, request }, served) =>
          whole
            ? lookupAnswer(tools, c, ips, request as LookupRequest, served)
            : streamListAnswer(c, ips, request as BulkStreamRequest, tools.streamDeps(c)),
      }),
  },
  {
    // A body of any length, read as the answer is written (bulk_answer.ts).
    path: "/bulk",
    methods: ["POST"],
    access: "key",
    doc: BULK_DOC,
    handler: (tools) =>
      answerPath(tools, {
        read: (c) => ({
          request: {
            ...readLookupQuery(c),
            format: streamFormat(c.req.query("format"), c.req.header("accept") ?? null),
          },
          input: bodyFormat(c.req.raw.headers),
        }),
        // The first unit, before a byte of the body is read; each further item pays for itself.
        cost: oneUnit,
        answer: (c, { request, input }) =>
          streamBodyAnswer(c, bodyStream(c), input, request, tools.streamDeps(c)),
      }),
  },
  {
    // An AS: parameters (400), one unit charged (429), the AS found (400/404 for the number),
    // one more unit per 1,000 prefixes in the answer (429), then the answer (its rendering kept).
    path: "/asn/{n}",
    methods: ["GET"],
    access: "key",
    doc: ASN_DOC,
    handler: (tools) =>
      answerPath(tools, {
        read: (c) => {
          const format = parseAsnFormat(c.req.query("format"));
          const selection = parseAsnSelection(c.req.query("get"));
          // Checked as on /ip (a malformed time is a 400); the lists are always today's here.
          parseAt(c.req.query("at"));
          return { n: c.req.param("n") ?? "", format, selection };
        },
        cost: oneUnit,
        answer: async (c, { n, format, selection }, served) => {
          const { asnView } = tools;
          const rest = asnCost(await asnView.prefixes(n, served.data, selection)) - 1;
          if (rest > 0) {
            const more = await tools.admission.charge(c, c.get("caller"), rest);
            if (more) throw more;
          }
          const answer = await asnView.answer(n, served.data, selection, format);
          return c.body(answer.body, 200, FORMAT_HEADERS[format]);
        },
      }),
  },
  {
    // The lookup page for a browser, /me for everyone else (as ifconfig.co does).
    path: "/",
    methods: ["GET"],
    access: "open",
    doc: PAGE_DOC,
    handler: (tools) => {
      // Everyone else gets /me: the key read here (the route is open to browsers).
      const me = addressPath(tools, null, (c) => c.set("caller", tools.admission.identifyByKey(c)));
      return (c) => {
        c.header("vary", "Accept");
        if (tools.site && acceptsHtml(c.req.header("accept") ?? null)) {
          return siteResponse(c, tools.site.page(c.req.raw));
        }
        return me(c);
      };
    },
  },
  {
    path: "/assets/{name}",
    methods: ["GET"],
    access: "open",
    doc: ASSETS_DOC,
    handler: (tools) => (c) => {
      const asset = tools.site?.asset(c.req.param("name") ?? "", c.req.raw);
      if (!asset) throw new AppError("not_found", "No such asset: see / for the page");
      return siteResponse(c, asset);
    },
  },
  {
    // Liveness: the process answers.
    path: "/health",
    methods: ["GET"],
    access: "open",
    doc: HEALTH_DOC,
    handler: () => (c) => c.body(HEALTH_BODY, 200, FORMAT_HEADERS.json),
  },
  {
    // Readiness: the data is loaded and every check passes.
    path: "/ready",
    methods: ["GET"],
    access: "open",
    doc: READY_DOC,
    handler: ({ deps }) => {
      const readyBodies = new WeakMap<DataSet, string>();
      return async (c) => {
        const data = c.get("served")?.data;
        const reason = data
          ? data.incomplete ?? await deps.ready?.() ?? null
          : "data is not loaded yet";
        if (!data || reason !== null) {
          const body = JSON.stringify({ success: false, message: `Not ready: ${reason}` });
          return c.body(body, 503, NO_STORE_JSON);
        }
        let body = readyBodies.get(data);
        if (!body) {
          const ready = readyData(data, deps.config.statusDetail ?? false);
          readyBodies.set(data, body = JSON.stringify({ success: true, data: ready }));
        }
        return c.body(body, 200, NO_STORE_JSON);
      };
    },
  },
  {
    // It names the sources (not charged): it follows the auth mode, while /health and /ready
    // stay open for probes.
    path: "/status",
    methods: ["GET"],
    access: "key",
    doc: STATUS_DOC,
    handler: ({ deps }) =>
      statusRoute(deps.dataDirectory, undefined, deps.policy ?? null, {
        detail: deps.config.statusDetail ?? false,
      }),
  },
  {
    path: "/metrics",
    methods: ["GET"],
    access: "open",
    doc: METRICS_DOC,
    handler: ({ deps }) => (c) => {
      const metrics = deps.metrics;
      if (!metrics) throw new AppError("not_found", "No metrics: IPINTEL_METRICS is off");
      if (
        metrics.token !== null &&
        !bearerMatches(c.req.header("authorization") ?? null, metrics.token)
      ) {
        const headers = { ...FORMAT_HEADERS.json, "www-authenticate": 'Bearer realm="metrics"' };
        return c.body(renderError(METRICS_UNAUTHORIZED, "json").body, 401, headers);
      }
      return c.body(metrics.render(), 200, METRICS_HEADERS);
    },
  },
  {
    path: "/openapi.json",
    methods: ["GET"],
    access: "open",
    doc: OPENAPI_DOC,
    handler: ({ routes }) => {
      const body = JSON.stringify(openApiDocument(routes));
      return (c) => c.body(body, 200, FORMAT_HEADERS.json);
    },
  },
  {
    // The MCP server for analysts' AI assistants (mcp_route.ts): the API's keys and limits,
    // bounded and checked before the SDK reads a message. Stateless: every POST its own session.
    path: "/mcp",
    methods: ["POST"],
    access: "key",
    doc: MCP_DOC,
    handler: mcpHandler,
  },
];

const NO_POLICY_MESSAGE =
  "No forward-auth policy: start the server with IPINTEL_POLICY (--policy) naming a policy file";
const HEALTH_BODY = JSON.stringify({ success: true, data: { status: "ok" } });
const NO_STORE_JSON = Object.freeze({ ...FORMAT_HEADERS.json, "cache-control": "no-store" });
const METRICS_HEADERS = Object.freeze({
  "content-type": METRICS_CONTENT_TYPE,
  "cache-control": "no-store",
});
const METRICS_UNAUTHORIZED =
  "Invalid or missing metrics token: send Authorization: Bearer <IPINTEL_METRICS_TOKEN>";

/** What `/ready` shows (open to probes): sources by scheme and host, unless IPINTEL_STATUS_DETAIL. */
function readyData(data: DataSet, detail: boolean): Json {
  return {
    status: "ready",
    databases: data.manifest.sources.map((s) => ({
      kind: s.kind,
      databaseType: s.databaseType,
      source: detail ? redactUrl(s.source) : sourceOrigin(s.source),
      built: s.built,
      license: s.license,
      attribution: s.attribution,
    })),
  };
}
