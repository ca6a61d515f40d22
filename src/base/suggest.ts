/**
 * "Did you mean": the known name nearest a mistyped one, for the messages of
 * the files ipintel checks (the policy file, the sources file).
 */

/**
 * The known name nearest `text` (case-insensitive), if it is near enough: two
 * edits, or a third of the longer word's length (`countries` → `country`).
 *
 * @example closest("formt", ["name", "format"]) // "format"
 */
export function closest(text: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const name of known) {
    const d = editDistance(text.toLowerCase(), name.toLowerCase());
    const near = Math.max(2, Math.floor(Math.max(text.length, name.length) / 3));
    if (d <= near && d < bestDistance) {
      [best, bestDistance] = [name, d];
    }
  }
  return best;
}

/** ` (did you mean "format"?)` for a near name, else "". */
export function didYouMean(text: string, known: readonly string[]): string {
  const near = closest(text, known);
  return near ? ` (did you mean "${near}"?)` : "";
}

/** Levenshtein distance: insertions, deletions and substitutions. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(
        previous[j]! + 1,
        row[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = row;
  }
  return previous[b.length]!;
}
