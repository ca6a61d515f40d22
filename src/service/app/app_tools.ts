/**
 * What the app is built from (`AppDeps`), and what every native route's
 * handler may use (`AppTools`), made once when the app is built.
 */

import type { AccessControl } from "../keys_limits/access_control.ts";
import type { AsnView } from "../../core/asn/view.ts";
import type { Config } from "../../base/config.ts";
import type { ClientAddressResolver } from "../http/client_address.ts";
import type { AppContext, ServedSlot } from "../http/env.ts";
import type { Route, RouteTools } from "../http/route.ts";
import type { AnswerRule } from "../http/rules/rules.ts";
import type { PolicyGate } from "../policy/gate.ts";
import type { createSite } from "../web/site.ts";
import type { AnswerCache } from "./answer_cache.ts";
import type { BulkStreamDeps } from "./bulk_answer.ts";

export interface AppDeps {
  /** What the server serves now (swapped whole on a reload). */
  slot: ServedSlot;
  config:
    & Pick<Config, "bulkMax" | "trustedProxies" | "forwardedHeader" | "corsOrigins">
    & Partial<Pick<Config, "web" | "mcp" | "streamIdleTimeout" | "statusDetail">>;
  /** Keys and rate limits; without it the API is open (as with IPINTEL_AUTH=off). */
  access?: AccessControl;
  /** Where 5xx details go (with the request's id); the client only sees a generic message. */
  logError?: (error: unknown, requestId?: string) => void;
  /** Readiness beyond the data being loaded (the KV answering...): null when ready, else why not. */
  ready?: () => Promise<string | null>;
  /** Why the data directory cannot be written (null: it can), for `/status`; absent: not shown. */
  dataDirectory?: () => Promise<string | null>;
  /** Serves `GET /metrics` (absent: no such route); with a token, only to `Bearer <token>`. */
  metrics?: { render: () => string; token: string | null };
  /** The forward-auth gate (IPINTEL_POLICY) `GET /auth` judges by; absent: /auth answers 404. */
  policy?: PolicyGate | null;
  /**
   * The outermost answer rule: metrics, access log and requests in flight
   * (src/service/ops/instrument.ts), with request ids for the logged answers.
   */
  instrumentation?: {
    rule: AnswerRule;
    /** A request's id, made on first use (undefined while nothing is logged). */
    requestId?: (c: AppContext) => string | undefined;
  };
  /** The client address resolver (one per server, shared with the access log); default: from `config`. */
  clientAddress?: ClientAddressResolver;
  /** Rendered answers of repeat lookups (absent: none are kept). */
  answerCache?: AnswerCache | null;
  /** The routes served (default: {@link ROUTES}); their labels must be the metrics'. */
  routes?: readonly Route<AppTools>[];
}

/** The tools of the native routes: the common ones, and what the app was built from. */
export interface AppTools extends RouteTools {
  deps: AppDeps;
  /** The routes the app serves (for `/openapi.json`). */
  routes: readonly Route<AppTools>[];
  /** Rendered answers of repeat `/ip` and `/me` lookups; null: none are kept. */
  answerCache: AnswerCache | null;
  /** The AS view (`/asn/{n}`, the MCP `asn` tool): its index built once per data set. */
  asnView: AsnView;
  /** The lookup page (null with IPINTEL_WEB=off). */
  site: ReturnType<typeof createSite> | null;
  /** What a streamed bulk answer of `c` needs: its lookup, its charge per batch, its limits. */
  streamDeps(c: AppContext): BulkStreamDeps;
}
