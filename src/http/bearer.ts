/** The bearer token check of `GET /metrics`. */

const encoder = new TextEncoder();

/**
 * True when `authorization` is `Bearer <token>`. Compares in time that does
 * not depend on where the texts differ (only on their lengths).
 */
export function bearerMatches(authorization: string | null, token: string): boolean {
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match) return false;
  const given = encoder.encode(match[1]!);
  const expected = encoder.encode(token);
  let difference = given.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) difference |= expected[i]! ^ (given[i] ?? 0);
  return difference === 0;
}
