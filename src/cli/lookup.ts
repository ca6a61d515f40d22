/** `ipintel lookup <ip>...`: prints the API's `data` object for each address, one JSON per line. */

import type { Config } from "../config.ts";
import { AppError } from "../errors.ts";
import { createServices } from "./services.ts";

const USAGE = "Usage: ipintel lookup <ip> [<ip> ...] [--ua <user agent>] [--lang <code>]";

/** Returns 0 when every address was answered, 1 when any failed, 2 on usage errors. */
export async function runLookup(config: Config, args: string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  const { values, positional } = parseLookupArgs(args);
  if (positional.length === 0) {
    console.error(USAGE);
    return 2;
  }
  const { lookup } = await createServices(config);
  let failed = 0;
  for (const ip of positional) {
    try {
      const result = lookup(ip, { userAgent: values.ua ?? null, lang: values.lang ?? null });
      console.log(JSON.stringify(result));
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      console.error(error.message);
      failed++;
    }
  }
  return failed ? 1 : 0;
}

function parseLookupArgs(args: string[]) {
  const values: { ua?: string; lang?: string } = {};
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = /^--(ua|lang)(?:=(.*))?$/s.exec(arg);
    if (!match) {
      positional.push(arg);
      continue;
    }
    const value = match[2] ?? args[++i];
    if (value === undefined) throw new Error(`Option --${match[1]} needs a value`);
    values[match[1] as "ua" | "lang"] = value;
  }
  return { values, positional };
}
