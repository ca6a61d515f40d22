/** The real command line as a user runs it: `deno run -A main.ts <args>` from the repository root. */

const ROOT = new URL("..", import.meta.url);

/** Spawns `main.ts <args>` with exactly `env` (plus what Deno passes on); its output piped. */
export function spawnCli(args: string[], env: Record<string, string>): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Runs `main.ts <args>` to the end (killed after `timeoutMs`); exit code, stdout and stderr. */
export async function runCli(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawnCli(args, env);
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const out = await child.output();
  clearTimeout(timer);
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}
