/**
 * A failure that repeats (the KV locked, unreachable) is logged once per
 * interval with a count, not once per attempt: the first failure at once,
 * then at most one line per interval saying how many more there were, and
 * one line when it works again.
 */

export interface ThrottledLog {
  /** Reports one failure (its message only: the stack of a repeated failure says nothing new). */
  failure(error: unknown): void;
  /** Reports a success: ends a run of failures. */
  success(): void;
}

export function throttledLog(
  what: string,
  intervalMs = 10_000,
  write: (line: string) => void = (line) => console.error(line),
  now: () => number = Date.now,
): ThrottledLog {
  /** Failures since the run began, and those not yet logged. */
  let total = 0;
  let unlogged = 0;
  let loggedAt = 0;
  let last = "";
  return {
    failure(error) {
      last = error instanceof Error ? error.message : String(error);
      total++;
      if (total === 1) {
        loggedAt = now();
        write(`ipintel: ${what} failed: ${last} (repeats are logged every ${intervalMs / 1000} s)`);
        return;
      }
      unlogged++;
      if (now() - loggedAt < intervalMs) return;
      write(
        `ipintel: ${what} failed ${unlogged} more time(s) in the last ${
          Math.round((now() - loggedAt) / 1000)
        } s; last error: ${last}`,
      );
      loggedAt = now();
      unlogged = 0;
    },
    success() {
      if (total === 0) return;
      write(`ipintel: ${what} works again (after ${total} failure(s))`);
      total = unlogged = 0;
    },
  };
}
