/**
 * The Hono environment of the app: what both servers pass (`Bindings`), and what
 * the answer rules (src/service/http/rules/) and a route's key rule set on the
 * context for the handler and each other (`Variables`).
 */

import type { Context } from "hono";
import type { Caller } from "../keys_limits/access_control.ts";
import type { RateDecision } from "../keys_limits/rate_limiter.ts";
import type { Lookup } from "../../core/lookup/lookup.ts";
import type { DataSet } from "../../data/sources/data_set.ts";
import { CONTENT_TYPES, type OutputFormat } from "../../core/format/render.ts";

/**
 * What both servers pass beside the request: the TCP peer, and node:http's GET
 * body; the app sets `streamed` when its answer is a stream to write as it comes.
 */
export interface ServeEnv {
  remoteAddr?: Deno.NetAddr;
  getBody?: ReadableStream<Uint8Array> | null;
  streamed?: boolean;
}

/** What answers a request: a data set and the lookup over it, swapped whole on a reload. */
export interface Served {
  data: DataSet;
  /** The lookup over `data`. */
  lookup: Lookup;
}

/** What serves `data` with `lookup` (each made once per data set). */
export function servedOf(data: DataSet, lookup: Lookup): Served {
  return { data, lookup };
}

/** Where the server keeps what it serves; `current` is null while the data is still loading. */
export interface ServedSlot {
  current: Served | null;
}

export interface AppEnv {
  /** `c.env`: undefined for an in-process `app.request` without one. */
  Bindings: ServeEnv | undefined;
  Variables: {
    /** The caller the route's key rule (or a compatible API's handler) identified (null: access control is off). */
    caller: Caller | null;
    /** The last rate decision charged: its RateLimit headers go on the answer. */
    rate: RateDecision | null;
    /** The index of the request's route label (its route's family; the 405s' too). */
    route: number;
    /** The caller's address, once resolved (trusted proxies applied). */
    client: string;
    /** The answer is a stream: written as it comes, counted as it passes, not read whole. */
    streamed: boolean;
    /** When the request arrived (performance.now()), for its duration in metrics and logs. */
    startedAt: number;
    /** The request's id (src/service/ops/request_id.ts), made on first use while the access log is on. */
    requestId: string;
    /** The data set that answers this request, pinned when it arrives (null: still loading). */
    served: Served | null;
  };
}

export type AppContext = Context<AppEnv>;

/** Where 5xx details go, with the request (for its id). */
export type ErrorLog = (error: unknown, c: AppContext) => void;

/** The handler both servers run (Deno.serve's and node_server's signature). */
export type FetchHandler = (request: Request, env?: ServeEnv) => Response | Promise<Response>;

/** The constant headers of a body in each format (frozen: shared by every answer). */
export const FORMAT_HEADERS: Readonly<Record<OutputFormat, Record<string, string>>> = {
  json: Object.freeze({ "content-type": CONTENT_TYPES.json }),
  xml: Object.freeze({ "content-type": CONTENT_TYPES.xml }),
  csv: Object.freeze({ "content-type": CONTENT_TYPES.csv }),
};

/** The TCP peer's address; throws when the server did not give one. */
export function peerAddress(c: AppContext): string {
  const peer = c.env?.remoteAddr?.hostname;
  if (!peer) throw new Error("The server did not provide the peer address");
  return peer;
}

/** The request body: the Fetch body, or a GET body the node:http server kept. */
export function bodyStream(c: AppContext): ReadableStream<Uint8Array> | null {
  return c.req.raw.body ?? c.env?.getBody ?? null;
}
