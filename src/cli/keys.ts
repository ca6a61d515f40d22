/** `ipintel keys create|list|revoke|rotate`: manages API keys in the KV the server uses. */

import { parseArgs } from "node:util";
import type { Config } from "../config.ts";
import { type ApiKeyRecord, type IssuedKey, type KeyStore, KvKeyStore } from "../store/keys.ts";
import { kvLocation, openKv } from "./kv.ts";

export const KEYS_USAGE = `Usage:
  ipintel keys create --name NAME [--limit N] [--window SECONDS] [--json]
  ipintel keys list [--json]
  ipintel keys revoke ID
  ipintel keys rotate ID [--json]
A key is shown once, when it is created or rotated; the store keeps only its SHA-256.`;

/** Runs one keys subcommand on the configured KV; returns the exit status. */
export async function runKeys(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    console.log(KEYS_USAGE);
    return sub === undefined ? 2 : 0;
  }
  const command = SUBCOMMANDS[sub];
  if (!command) throw new Error(`Unknown keys subcommand "${sub}"\n${KEYS_USAGE}`);
  const kv = await openKv(config);
  try {
    return await command(new KvKeyStore(kv), rest, kvLocation(config));
  } finally {
    kv.close();
  }
}

type Subcommand = (store: KeyStore, args: string[], where: string) => Promise<number>;

const SUBCOMMANDS: Record<string, Subcommand> = {
  async create(store, args, where) {
    const { values } = parse(args, {
      name: { type: "string" },
      limit: { type: "string" },
      window: { type: "string" },
      json: { type: "boolean" },
    }, 0);
    if (values.name === undefined) throw new Error(`keys create needs --name\n${KEYS_USAGE}`);
    const issued = await store.create({
      name: values.name as string,
      limit: optionalInteger(values.limit, "--limit", 0),
      window: optionalInteger(values.window, "--window", 1),
    });
    printIssued(issued, values.json === true, `Created API key in ${where}`);
    return 0;
  },

  async list(store, args) {
    const { values } = parse(args, { json: { type: "boolean" } }, 0);
    const records = await store.list();
    if (values.json) {
      for (const record of records) console.log(JSON.stringify(publicView(record)));
      return 0;
    }
    if (records.length === 0) {
      console.log("No API keys yet: create one with keys create --name NAME");
    }
    for (const r of records) {
      const state = r.revoked ? "revoked" : "active";
      console.log(`${r.id}  ${state.padEnd(7)}  ${limitText(r)}  created ${r.created}  ${r.name}`);
    }
    return 0;
  },

  async revoke(store, args) {
    const { positionals } = parse(args, {}, 1);
    const record = await store.revoke(positionals[0]!);
    console.log(`Revoked API key ${record.id} (${record.name}); servers refuse it within 2 s`);
    return 0;
  },

  async rotate(store, args) {
    const { values, positionals } = parse(args, { json: { type: "boolean" } }, 1);
    const issued = await store.rotate(positionals[0]!);
    printIssued(issued, values.json === true, "Rotated API key (the old secret stops working)");
    return 0;
  },
};

type FlagSpec = Record<string, { type: "string" | "boolean" }>;

/** Strict flags: an unknown flag, a missing value or a wrong number of arguments is an error. */
function parse(args: string[], options: FlagSpec, positionalCount: number) {
  const parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  if (parsed.positionals.length !== positionalCount) {
    throw new Error(
      positionalCount === 1
        ? `Expected one key id, got ${parsed.positionals.length}\n${KEYS_USAGE}`
        : `Unexpected argument "${parsed.positionals[0]}"\n${KEYS_USAGE}`,
    );
  }
  return parsed;
}

function optionalInteger(text: unknown, flag: string, min: number): number | null {
  if (text === undefined) return null;
  const value = Number(text);
  if (typeof text !== "string" || !/^\d+$/.test(text) || value < min || value > 1_000_000_000) {
    throw new Error(`Invalid ${flag} "${text}": expected an integer from ${min} to 1000000000`);
  }
  return value;
}

/** What may be shown about a key: everything but its hash. */
function publicView(r: ApiKeyRecord) {
  return {
    id: r.id,
    name: r.name,
    limit: r.limit,
    window: r.window,
    created: r.created,
    rotated: r.rotated,
    revoked: r.revoked,
  };
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
