/** Load for the server fault tests: requests in a loop, each on a new connection, every failure kept. */

export interface LoadResult {
  /** Requests answered (any status) or failed. */
  total: number;
  /** What went wrong: a status other than 200, or no answer at all. */
  failures: string[];
}

/**
 * Runs `concurrency` loops of GET `url` (a new connection each, so the kernel
 * spreads them over the workers) until `stop()`; `check` sees each 200 body.
 */
export function startLoad(
  url: string,
  concurrency: number,
  check: (body: string) => void = () => {},
): { stop(): Promise<LoadResult> } {
  const result: LoadResult = { total: 0, failures: [] };
  let running = true;
  const loop = async () => {
    while (running) {
      const client = Deno.createHttpClient({});
      try {
        const response = await fetch(url, { client, signal: AbortSignal.timeout(10_000) });
        const body = await response.text();
        if (response.status !== 200) result.failures.push(`${response.status}: ${body}`);
        else check(body);
      } catch (error) {
        result.failures.push(String(error));
      } finally {
        client.close();
        result.total++;
      }
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return result;
    },
  };
}
