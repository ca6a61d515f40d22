/**
 * Readiness: whether this instance should get traffic. Data loaded is checked
 * by the app (it holds the data slot); the rest are named checks, such as the
 * KV answering a read, each bounded by a timeout so a hung dependency makes
 * the answer "not ready" rather than no answer.
 */

export interface ReadinessCheck {
  /** What the reason names, e.g. `Deno KV`. */
  name: string;
  /** Resolves when the dependency is usable; rejects (or exceeds the timeout) when not. */
  check: () => Promise<unknown>;
}

/**
 * Runs the checks together; resolves to null when all pass, else the first
 * failure's reason, e.g. `Deno KV: database is locked`.
 */
export function createReadiness(
  checks: readonly ReadinessCheck[],
  timeoutMs = 2000,
): () => Promise<string | null> {
  return async () => {
    const reasons = await Promise.all(checks.map((c) => run(c, timeoutMs)));
    return reasons.find((reason) => reason !== null) ?? null;
  };
}

async function run(check: ReadinessCheck, timeoutMs: number): Promise<string | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`${check.name}: no answer within ${timeoutMs} ms`),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([
      check.check().then(
        () => null,
        (error) => `${check.name}: ${error instanceof Error ? error.message : error}`,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
