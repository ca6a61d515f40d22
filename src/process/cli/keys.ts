/** `ipintel keys create|list|set|revoke|rotate|delete`: manages API keys in the KV the server uses. */

import { keyCallerId } from "../../service/keys_limits/access_control.ts";
import { counterId, slidingUsage } from "../../service/keys_limits/rate_limiter.ts";
import { type Config, ConfigError, UsageError } from "../../base/config.ts";
import {
  type ApiKeyRecord,
  type IssuedKey,
  type KeyStore,
  KvKeyStore,
  readServerDefaults,
  type ServerDefaults,
  UnknownKeyError,
} from "../../data/store/keys.ts";
import { KvRateCounters } from "../../data/store/rate_counts.ts";
import { BusyRetry } from "../../data/store/busy.ts";
import { type Command, defineCommand } from "./command.ts";
import { kvLocation, openKv } from "../server/kv.ts";

const JSON_FLAG = {
  json: { type: "boolean", description: "Print JSON (one object per line)" },
} as const;
const ID = { min: 1, max: 1 };

/** What the key commands read: where the KV is (beside the data by default), the default limit. */
const KEY_SETTINGS = ["kv", "dataDir", "rateLimit", "rateWindow"] as const;

export const keysCommand: Command = {
  summary: "Manage API keys (shown once at creation; stored only as a SHA-256 hash)",
  subcommands: {
    create: defineCommand({
      summary: "Create an API key and print it once",
      settings: KEY_SETTINGS,
      flags: {
        name: {
          type: "string",
          placeholder: "<name>",
          description: "Who the key is for (required)",
        },
        limit: {
          type: "string",
          placeholder: "<n>",
          description: "Own limit: requests per window (0: unlimited; default IPINTEL_RATE_LIMIT)",
        },
        window: {
          type: "string",
          placeholder: "<seconds>",
          description: "Own window in seconds (default IPINTEL_RATE_WINDOW)",
        },
        ...JSON_FLAG,
      },
      details: 'With --json: one line {"id","name","key","limit","window"}.',
      run: ({ config, flags }) =>
        withStore(config, async (store, where) => {
          if (flags.name === undefined) throw new UsageError("keys create needs --name <name>");
          const issued = await store.create({
            name: flags.name,
            limit: optionalInteger(flags.limit, "--limit", 0),
            window: optionalInteger(flags.window, "--window", 1),
          });
          printIssued(issued, flags.json === true, `Created API key in ${where}`);
        }),
    }),
    list: defineCommand({
      summary: "List the keys with their use now and their last use (never the keys themselves)",
      settings: KEY_SETTINGS,
      flags: JSON_FLAG,
      details:
        "Use is the sliding-window count the servers share in the KV (at most 0.25 s behind). " +
        "A key without its own limit or window has the server's: the default limit and window " +
        "the last server started on this KV recorded there (before any has, the limit is shown " +
        'as "the server default" and the window is this command\'s IPINTEL_RATE_WINDOW). ' +
        'With --json, "limit" and "window" are the effective ones and "serverDefaults" is ' +
        'what the server recorded ({"limit","window","recorded"}, or null).',
      run: ({ config, flags }) =>
        withStore(config, async (store, _where, kv, busy) => {
          const records = await store.list();
          const defaults = await readServerDefaults(kv, busy);
          const counters = new KvRateCounters(kv, busy);
          const uses = await Promise.all(records.map((r) => useOf(counters, r, config, defaults)));
          if (flags.json) {
            records.forEach((record, i) => {
              const { known: _, ...use } = uses[i]!;
              console.log(
                JSON.stringify({ ...publicView(record), ...use, serverDefaults: defaults }),
              );
            });
            return;
          }
          if (records.length === 0) {
            console.log("No API keys yet: create one with keys create --name <name>");
          }
          records.forEach((r, i) => {
            const state = r.revoked ? "revoked" : "active";
            const { used, limit, window, lastUsed, known } = uses[i]!;
            const of = !known ? " of the server default" : limit === 0 ? "" : ` of ${limit}`;
            const use = `used ${used}${of} in ${window} s`;
            console.log(
              `${r.id}  ${state.padEnd(7)}  ${limitText(r)}  ${use}  last used ${
                lastUsed ?? "never"
              }  created ${r.created}  ${r.name}`,
            );
          });
        }),
    }),
    set: defineCommand({
      summary: "Change a key's limit or window (same secret; servers apply it within 2 s)",
      settings: KEY_SETTINGS,
      usage: "<id>",
      positionals: ID,
      flags: {
        limit: {
          type: "string",
          placeholder: "<n>",
          description: 'Requests per window (0: unlimited; "default": IPINTEL_RATE_LIMIT)',
        },
        window: {
          type: "string",
          placeholder: "<seconds>",
          description: 'Window in seconds ("default": IPINTEL_RATE_WINDOW)',
        },
      },
      details:
        "A new window starts a new count for the key; a new limit applies to the count so far.",
      run: ({ config, flags, positionals }) =>
        withStore(config, async (store) => {
          if (flags.limit === undefined && flags.window === undefined) {
            throw new UsageError("keys set needs --limit <n>, --window <seconds> or both");
          }
          const id = positionals[0]!;
          const current = (await store.list()).find((r) => r.id === id);
          if (!current) throw new UnknownKeyError(id);
          const record = await store.setLimits(id, {
            limit: flags.limit === undefined ? current.limit : setting(flags.limit, "--limit", 0),
            window: flags.window === undefined
              ? current.window
              : setting(flags.window, "--window", 1),
          });
          console.log(
            `API key ${record.id} (${record.name}): ${
              limitText(record)
            }; servers apply it within 2 s`,
          );
        }),
    }),
    revoke: defineCommand({
      summary: "Revoke a key (every server refuses it within 2 s)",
      settings: KEY_SETTINGS,
      usage: "<id>",
      positionals: ID,
      run: ({ config, positionals }) =>
        withStore(config, async (store) => {
          const record = await store.revoke(positionals[0]!);
          console.log(
            `Revoked API key ${record.id} (${record.name}); servers refuse it within 2 s`,
          );
        }),
    }),
    delete: defineCommand({
      summary: "Delete a revoked key for good (its record, hash and last use)",
      settings: KEY_SETTINGS,
      usage: "<id>",
      positionals: ID,
      run: ({ config, positionals }) =>
        withStore(config, async (store, _where, kv, busy) => {
          const record = await store.delete(positionals[0]!);
          await new KvRateCounters(kv, busy).forget(counterId(keyCallerId(record.id)));
          console.log(`Deleted API key ${record.id} (${record.name})`);
        }),
    }),
    rotate: defineCommand({
      summary: "Give a key a new secret (same id and limits; the old one stops working)",
      settings: KEY_SETTINGS,
      usage: "<id>",
      positionals: ID,
      flags: JSON_FLAG,
      run: ({ config, flags, positionals }) =>
        withStore(config, async (store) => {
          const issued = await store.rotate(positionals[0]!);
          printIssued(
            issued,
            flags.json === true,
            "Rotated API key (the old secret stops working)",
          );
        }),
    }),
  },
};

/**
 * Opens the configured KV around one action. An unknown id or an active key
 * to delete is the command failing (exit 1, as docs/api.md says), not a usage error;
 * so is a KV that stays busy past the bound (a KvBusyError naming it).
 */
async function withStore(
  config: Config,
  action: (store: KeyStore, where: string, kv: Deno.Kv, busy: BusyRetry) => Promise<void>,
): Promise<number> {
  const kv = await openKv(config);
  try {
    // A running server writes its counts every 250 ms: every call waits out a busy KV.
    const busy = new BusyRetry({ location: kvLocation(config) });
    // Thrown on, an UnknownKeyError or ActiveKeyError is printed by runCommand with exit 1.
    await action(new KvKeyStore(kv, undefined, busy), kvLocation(config), kv, busy);
    return 0;
  } finally {
    kv.close();
  }
}

function optionalInteger(text: string | undefined, flag: string, min: number): number | null {
  if (text === undefined) return null;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > 1_000_000_000) {
    throw new ConfigError(
      `Invalid ${flag} ${JSON.stringify(text)}: expected an integer from ${min} to 1000000000`,
    );
  }
  return value;
}

/** `--limit`/`--window` of keys set: a number, or "default" (null: the server's setting). */
function setting(text: string, flag: string, min: number): number | null {
  return text === "default" ? null : optionalInteger(text, flag, min);
}

/**
 * A key's use in its current sliding window, from the counts the servers
 * share (the limiter's own counters), and its last use (ISO, or null). Its
 * limit and window are its own, else the server's recorded defaults, else
 * this command's settings (`known` false: the limit is the server's, unknown here).
 */
async function useOf(
  counters: KvRateCounters,
  r: ApiKeyRecord,
  config: Config,
  defaults: ServerDefaults | null,
) {
  const limit = r.limit ?? defaults?.limit ?? config.rateLimit;
  const window = r.window ?? defaults?.window ?? config.rateWindow;
  const known = r.limit !== null || defaults !== null;
  const caller = counterId(keyCallerId(r.id));
  const seconds = Date.now() / 1000;
  const index = Math.floor(seconds / window);
  const [previous, current] = await counters.read([index - 1, index].map((windowIndex) => ({
    caller,
    windowSeconds: window,
    windowIndex,
  })));
  const used = Math.ceil(
    slidingUsage(previous!, current!, seconds - index * window, window) - 1e-9,
  );
  const last = await counters.lastUsed(caller);
  return {
    used,
    limit,
    window,
    lastUsed: last === null ? null : new Date(last).toISOString(),
    known,
  };
}

/** What may be shown about a key: everything but its hash. */
function publicView(r: ApiKeyRecord) {
  const { id, name, limit, window, created, rotated, revoked } = r;
  return { id, name, limit, window, created, rotated, revoked };
}

function printIssued({ record, key }: IssuedKey, json: boolean, heading: string) {
  if (json) {
    const { id, name, limit, window } = record;
    console.log(JSON.stringify({ id, name, key, limit, window }));
    return;
  }
  console.log(`${heading}: ${record.id} (${record.name}), ${limitText(record)}`);
  console.log(`Key (shown only now; store it safely): ${key}`);
}

function limitText(r: ApiKeyRecord): string {
  const limit = r.limit === null ? "default limit" : r.limit === 0 ? "unlimited" : `${r.limit}`;
  const window = r.window === null ? "default window" : `${r.window} s`;
  return `${limit} / ${window}`;
}
