/**
 * The last line of defence of a serving isolate: an unhandled promise
 * rejection or an uncaught error is logged (and counted) instead of ending
 * the process at once, without a drain, with the requests in flight. A bug
 * in one background task must not take every client's request down with it.
 */

/**
 * Catches what nothing else caught in this isolate (the main one or a worker)
 * until the returned function is called. `onError` runs after the error is
 * logged (to count it); the isolate carries on.
 */
export function guardUncaughtErrors(
  onError: (error: unknown) => void = () => {},
  log: (line: string) => void = (line) => console.error(line),
): () => void {
  const report = (what: string, error: unknown) => {
    const detail = error instanceof Error ? error.stack ?? error.message : String(error);
    log(`ipintel: ${what} (logged, the server carries on): ${detail}`);
    onError(error);
  };
  const rejection = (event: PromiseRejectionEvent) => {
    event.preventDefault();
    report("unhandled promise rejection", event.reason);
  };
  const uncaught = (event: ErrorEvent) => {
    event.preventDefault();
    report("uncaught error", event.error ?? event.message);
  };
  addEventListener("unhandledrejection", rejection);
  addEventListener("error", uncaught);
  return () => {
    removeEventListener("unhandledrejection", rejection);
    removeEventListener("error", uncaught);
  };
}
