/** The real command line as a user runs it: `deno run -A main.ts <args>` from the repository root. */

const ROOT = new URL("..", import.meta.url);

/**
 * Spawns `main.ts <args>` with exactly `env` (plus what Deno passes on); its
 * output piped, its input too with `stdin: "piped"`.
 */
export function spawnCli(
  args: string[],
  env: Record<string, string>,
  stdin: "null" | "piped" = "null",
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args],
    cwd: ROOT,
    env,
    stdin,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/**
 * Runs `main.ts <args>` to the end (killed after `timeoutMs`), `input` (if
 * any) on its standard input; exit code, stdout and stderr.
 */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 120_000,
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawnCli(args, env, input === undefined ? "null" : "piped");
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  // Written while the output is read: a long input and a long output would otherwise each
  // wait for the other (the child blocked writing a full pipe, this one writing its input).
  const writing = input === undefined ? Promise.resolve() : (async () => {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
  })();
  const [out] = await Promise.all([child.output(), writing]);
  clearTimeout(timer);
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}
