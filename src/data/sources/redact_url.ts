/**
 * Source URLs may carry secrets: `https://user:pass@host/...`, `?token=...`,
 * `?license_key=...`. Every URL shown (in /status, /ready, logs, error
 * messages and the manifest) goes through here first: the user information
 * and every query value are replaced, the rest stays to tell sources apart.
 */

const HIDDEN = "REDACTED";

/** The URL with its user information and query values hidden; other text as it is. */
export function redactUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return text;
  if (!url.username && !url.password && !url.search && !url.hash) return text; // as written
  if (url.username) url.username = HIDDEN;
  if (url.password) url.password = "";
  if (url.search) {
    const names = [...new URLSearchParams(url.search).keys()];
    url.search = names.map((name) => `${encodeURIComponent(name)}=${HIDDEN}`).join("&");
  }
  url.hash = "";
  return url.href;
}

/** Every http(s) URL inside a message, redacted (for errors that quote URLs). */
export function redactUrls(message: string): string {
  return message.replace(/https?:\/\/[^\s"'<>)]+/gi, (found) => redactUrl(found));
}

/**
 * Where a source comes from, without its path (what `/status` shows unless
 * IPINTEL_STATUS_DETAIL is on): an http(s) URL's scheme and host (and port),
 * `file://` for a file on the server; other sources (`npm:package@version`)
 * as they are.
 */
export function sourceOrigin(source: string): string {
  if (source.startsWith("/")) return LOCAL; // an operator's database file
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    return source;
  }
  if (url.protocol === "file:") return LOCAL;
  if (url.protocol !== "http:" && url.protocol !== "https:") return source;
  return url.origin;
}

const LOCAL = "file://";

/**
 * A message with every URL cut to its origin (see {@link sourceOrigin}), and
 * every absolute file path (two slashes or more) to `file://`.
 */
export function sourceOrigins(message: string): string {
  // A URL or path ends before spaces, quotes and brackets, and never on the punctuation after it.
  return message
    .replace(/(?:https?|file):\/\/(?:[^\s"'<>)]*[^\s"'<>).,;:])?/gi, (found) => sourceOrigin(found))
    .replace(
      /(^|[\s"'(])\/[^\s"'<>)]*\/(?:[^\s"'<>)]*[^\s"'<>).,;:])?/g,
      (_found, before) => `${before}${LOCAL}`,
    );
}
