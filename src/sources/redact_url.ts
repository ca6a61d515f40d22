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
