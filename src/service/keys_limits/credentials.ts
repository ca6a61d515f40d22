/** The credentials a request carries in its headers: the one Bearer parser, and Basic. */

const BEARER = /^\s*bearer\s+(\S+)\s*$/i;

/** The challenge of a 401 where the API key is taken as a Bearer token (RFC 6750). */
export const BEARER_CHALLENGE = 'Bearer realm="ipintel"';
/** The challenge of a 401 where the key is the password of Basic auth (MaxMind's clients). */
export const BASIC_CHALLENGE = 'Basic realm="ipintel"';
const encoder = new TextEncoder();

/** The token of `Authorization: Bearer <token>`, or null (no header, another scheme, no token). */
export function bearerToken(authorization: string | null): string | null {
  if (authorization === null) return null;
  return BEARER.exec(authorization)?.[1] ?? null;
}

/**
 * True when `authorization` is `Bearer <token>`. Compares in time that does
 * not depend on where the texts differ (only on their lengths).
 */
export function bearerMatches(authorization: string | null, token: string): boolean {
  const sent = bearerToken(authorization);
  if (sent === null) return false;
  const given = encoder.encode(sent);
  const expected = encoder.encode(token);
  let difference = given.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) difference |= expected[i]! ^ (given[i] ?? 0);
  return difference === 0;
}

/**
 * The API key a request carries: the `apiKey` query parameter (it wins, as the
 * spec names it), else `X-API-Key`, else `Authorization: Bearer`. Null when none.
 * An Authorization header of another scheme is still a key, and a wrong one.
 */
export function apiKeyOf(queryKey: string | undefined, headers: Headers): string | null {
  if (queryKey !== undefined) return queryKey;
  const header = headers.get("x-api-key");
  if (header !== null) return header.trim();
  const authorization = headers.get("authorization");
  if (authorization === null) return null;
  return bearerToken(authorization) ?? authorization.trim();
}

/** The credentials of `Authorization: Basic base64(user:password)`, or null. */
export function basicCredentials(headers: Headers): { user: string; password: string } | null {
  const match = /^\s*basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(headers.get("authorization") ?? "");
  if (!match) return null;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true })
      .decode(Uint8Array.from(atob(match[1]!), (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
  const colon = text.indexOf(":");
  return colon === -1
    ? { user: text, password: "" }
    : { user: text.slice(0, colon), password: text.slice(colon + 1) };
}
