/**
 * Tests that need a tool the machine may lack (Python modules, mmdblookup,
 * Chromium) are `ignore:`d when it is missing, never passed by returning early:
 * the tally then counts them as ignored, and the name says why.
 */

/** `name`, with ` (ignored: <reason>)` appended when `reason` is given. */
export function ignoredName(name: string, reason: string | null): string {
  return reason === null ? name : `${name} (ignored: ${reason})`;
}
