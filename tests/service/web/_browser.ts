/**
 * Helpers for the real-browser tests: the real server (`main.ts serve --port 0`
 * on the default data) and headless Chromium from Debian's `chromium` package,
 * driven by puppeteer-core. Screenshots go to tests/service/web/output/ (gitignored).
 */

import puppeteer, { type Browser } from "puppeteer-core";
import { startServe } from "../../_serve_process.ts";
import { DEFAULT_DATA_DIR } from "../../_helpers.ts";

const ROOT = new URL("../../..", import.meta.url);
export const CHROMIUM = "/usr/bin/chromium";
export const OUTPUT_DIR = new URL("./output/", import.meta.url).pathname;

/** Whether Chromium is installed; when not, the browser tests are ignored, saying why in their names. */
export function chromiumAvailable(): boolean {
  try {
    return Deno.statSync(CHROMIUM).isFile;
  } catch {
    return false;
  }
}

export interface RunningServer {
  origin: string;
  kv: string;
  log: () => string;
  close: () => Promise<void>;
}

/** Runs the ipintel CLI with this KV (e.g. to create a key before the server starts). */
export async function cli(kv: string, ...args: string[]): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args],
    cwd: ROOT,
    env: { IPINTEL_DATA_DIR: DEFAULT_DATA_DIR, IPINTEL_KV: kv, NO_COLOR: "1" },
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  if (!output.success) throw new Error(`ipintel ${args.join(" ")} failed: ${stderr}`);
  return new TextDecoder().decode(output.stdout);
}

/** Starts the real server on a free port with its KV in `dir`; resolves once the data is loaded. */
export async function startServer(
  dir: string,
  env: Record<string, string> = {},
): Promise<RunningServer> {
  const kv = `${dir}/ipintel.kv`;
  const server = await startServe({
    IPINTEL_DATA_DIR: DEFAULT_DATA_DIR,
    IPINTEL_KV: kv,
    NO_COLOR: "1",
    ...env,
  });
  return {
    origin: `http://127.0.0.1:${server.port}`,
    kv,
    log: server.stderr,
    close: server.stop,
  };
}

/** Headless Chromium with a fresh profile and nothing that reaches the network on its own. */
export async function launchBrowser(profileDir: string): Promise<Browser> {
  return await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profileDir}`,
    ],
  });
}
