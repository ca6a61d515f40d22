/** `ipintel keys create|list|revoke|rotate`: manages API keys in the KV the server uses. */

import { type Config, ConfigError, UsageError } from "../config.ts";
import {
  type ApiKeyRecord,
  type IssuedKey,
  type KeyStore,
  KvKeyStore,
  UnknownKeyError,
} from "../store/keys.ts";
import { type Command, defineCommand } from "./command.ts";
import { kvLocation, openKv } from "./kv.ts";

const JSON_FLAG = {
  json: { type: "boolean", description: "Print JSON (one object per line)" },
} as const;
const ID = { min: 1, max: 1 };

export const keysCommand: Command = {
  summary: "Manage API keys (shown once at creation; stored only as a SHA-256 hash)",
  subcommands: {
    create: defineCommand({
      summary: "Create an API key and print it once",
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
      summary: "List the keys (never the keys themselves)",
      flags: JSON_FLAG,
      run: ({ config, flags }) =>
        withStore(config, async (store) => {
          const records = await store.list();
          if (flags.json) {
            for (const record of records) console.log(JSON.stringify(publicView(record)));
          } else if (records.length === 0) {
            console.log("No API keys yet: create one with keys create --name <name>");
          }
          if (flags.json) return;
          for (const r of records) {
            const state = r.revoked ? "revoked" : "active";
            console.log(
              `${r.id}  ${state.padEnd(7)}  ${limitText(r)}  created ${r.created}  ${r.name}`,
            );
          }
        }),
    }),
    revoke: defineCommand({
      summary: "Revoke a key (every server refuses it within 2 s)",
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
    rotate: defineCommand({
      summary: "Give a key a new secret (same id and limits; the old one stops working)",
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

/** Opens the configured KV around one action; an unknown id is a usage error (exit 2). */
async function withStore(
  config: Config,
  action: (store: KeyStore, where: string) => Promise<void>,
): Promise<number> {
  const kv = await openKv(config);
  try {
    await action(new KvKeyStore(kv), kvLocation(config));
    return 0;
  } catch (error) {
    if (error instanceof UnknownKeyError) throw new UsageError(error.message);
    throw error;
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
