/** ipintel entry point: `deno task ipintel <command>`; see `--help`. */

import { runCli } from "./src/process/cli/main.ts";

if (import.meta.main) {
  Deno.exit(await runCli(Deno.args, Deno.env.toObject()));
}
