/**
 * The lookup page for people: the HTML page and its assets (script, style,
 * world map), framework-free. A site builds its assets once, on first use,
 * keeps them in memory (nothing is written to disk) and serves them under
 * content-hashed names with long cache lifetimes; the page itself is
 * revalidated every time.
 */

import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { renderPage } from "./page.ts";
import { buildWorldSvg } from "./world_map.ts";

interface Asset {
  name: string;
  body: Uint8Array<ArrayBuffer>;
  /** The same, gzip-compressed once (served when the client accepts gzip). */
  gzipped: Uint8Array<ArrayBuffer>;
  contentType: string;
  etag: string;
}

/** A response as the app sends it (src/service/app/app.ts). */
export interface SiteAnswer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer> | null;
}

export interface Site {
  /** The page, or a 304 when the browser's copy (If-None-Match) is current. */
  page(request: { headers: Headers }): SiteAnswer;
  /** A hashed asset by its file name, or null when there is none. */
  asset(name: string, request: { headers: Headers }): SiteAnswer | null;
}

/** The Content-Security-Policy of the page: everything from this server, nothing inline. */
export const PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; " +
  "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
  "form-action 'self'; frame-ancestors 'none'";

const SOURCE_FILES = [
  ["app", "js", "text/javascript; charset=utf-8"],
  ["style", "css", "text/css; charset=utf-8"],
] as const;

type AssetName = "app" | "style" | "world";

/** The assets and their URLs by name. */
interface Built {
  assets: Map<string, Asset>;
  urls: Record<AssetName, string>;
}

/** Builds the assets (the map takes a noticeable while: a site builds them once, on first use). */
function buildAssets(): Built {
  const list: Asset[] = [];
  const urls = {} as Record<AssetName, string>;
  const add = (base: AssetName, ext: string, contentType: string, text: string) => {
    const body = new TextEncoder().encode(text);
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
    const name = `${base}.${hash}.${ext}`;
    list.push({ name, body, gzipped: gzip(body), contentType, etag: `"${hash}"` });
    urls[base] = `/assets/${name}`;
  };
  for (const [base, ext, type] of SOURCE_FILES) {
    // Read beside this module: `deno compile --include src/service/web/assets/` embeds them.
    add(
      base,
      ext,
      type,
      Deno.readTextFileSync(new URL(`./assets/${base}.${ext}`, import.meta.url)),
    );
  }
  add("world", "svg", "image/svg+xml; charset=utf-8", buildWorldSvg());
  return { assets: new Map(list.map((a) => [a.name, a])), urls };
}

/** The site for a server whose bulk requests take at most `bulkMax` addresses. */
export function createSite(options: { bulkMax: number }): Site {
  let built: Built | null = null;
  const assets = () => built ??= buildAssets();
  let page:
    | { body: Uint8Array<ArrayBuffer>; gzipped: Uint8Array<ArrayBuffer>; etag: string }
    | null = null;
  const pageOnce = () => {
    if (page) return page;
    const html = new TextEncoder().encode(
      renderPage({ ...assets().urls, bulkMax: options.bulkMax }),
    );
    const hash = createHash("sha256").update(html).digest("hex").slice(0, 16);
    return page = { body: html, gzipped: gzip(html), etag: `"${hash}"` };
  };
  return {
    page(request) {
      const page = pageOnce();
      const headers = {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": PAGE_CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-cache",
        "vary": "Accept, Accept-Encoding",
        etag: page.etag,
      };
      return respond(request, page, headers);
    },
    asset(name, request) {
      const asset = assets().assets.get(name);
      if (!asset) return null;
      const headers = {
        "content-type": asset.contentType,
        "cache-control": "public, max-age=31536000, immutable",
        "x-content-type-options": "nosniff",
        "vary": "Accept-Encoding",
        etag: asset.etag,
      };
      return respond(request, asset, headers);
    },
  };
}

/** 304 when the client's copy is current; else the body, gzipped when the client accepts it. */
function respond(
  request: { headers: Headers },
  file: { body: Uint8Array<ArrayBuffer>; gzipped: Uint8Array<ArrayBuffer>; etag: string },
  headers: Record<string, string>,
): SiteAnswer {
  if (matches(request.headers.get("if-none-match"), file.etag)) {
    return { status: 304, headers, body: null };
  }
  if (acceptsGzip(request.headers.get("accept-encoding"))) {
    return { status: 200, headers: { ...headers, "content-encoding": "gzip" }, body: file.gzipped };
  }
  return { status: 200, headers, body: file.body };
}

function gzip(body: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(gzipSync(body, { level: 9 }));
}

function acceptsGzip(acceptEncoding: string | null): boolean {
  return (acceptEncoding ?? "").split(",").some((part) => {
    const [coding, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    if (coding !== "gzip" && coding !== "*") return false;
    const q = params.find((p) => p.startsWith("q="));
    return !q || Number(q.slice(2)) > 0;
  });
}

/** Whether an If-None-Match header names this ETag (or is `*`). */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((t) => {
    const tag = t.trim().replace(/^W\//, "");
    return tag === etag || tag === "*";
  });
}

/** Whether a request's Accept header asks for HTML (browsers do; curl sends *\/*). */
export function acceptsHtml(accept: string | null): boolean {
  if (!accept) return false;
  return accept.split(",").some((part) => {
    const [type, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    if (type !== "text/html") return false;
    const q = params.find((p) => p.startsWith("q="));
    return !q || Number(q.slice(2)) > 0;
  });
}
