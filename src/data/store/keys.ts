/**
 * API keys: generation, hashing, and the key store (Deno KV and in-memory).
 *
 * A key is `ipi_` + 32 base64url characters (192 random bits). It is shown once,
 * at creation; the store keeps only its SHA-256, and finds a key by that hash.
 * The KV layout (one prefix, tuples): `["keys", "id", id]` → the record,
 * `["keys", "hash", hex]` → the id, `["keys", "version"]` → a counter bumped by
 * every change so that servers notice revocations without scanning;
 * `["keys", "defaults"]` → the limit and window a server applies to keys
 * without their own (written by each server at start, read by `keys list`).
 * Every KV call goes through a {@link BusyRetry}: a busy KV is waited for, within a bound.
 */

import { BusyRetry } from "./busy.ts";
import { sha256Hex } from "./sha256.ts";

export const KEY_PREFIX = "ipi_";
const KEY_BYTES = 24;

/** What the store keeps about a key; never the key itself. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  /** Hex SHA-256 of the key. */
  hash: string;
  /** ISO time of creation. */
  created: string;
  /** ISO time of the last rotation, or null. */
  rotated: string | null;
  /** Own limit (requests per window) and window (seconds); null means the server's default. */
  limit: number | null;
  window: number | null;
  revoked: boolean;
}

export interface NewKeyOptions {
  name: string;
  limit?: number | null;
  window?: number | null;
}

/** A record with its secret, as returned once by create and rotate. */
export interface IssuedKey {
  record: ApiKeyRecord;
  key: string;
}

/** Keys as the CLI and the server see them. */
export interface KeyStore {
  create(options: NewKeyOptions): Promise<IssuedKey>;
  list(): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked; throws when no key has this id. */
  revoke(id: string): Promise<ApiKeyRecord>;
  /** Gives a key a new secret with the same id and settings; the old secret stops working. */
  rotate(id: string): Promise<IssuedKey>;
  /** Changes a key's own limit and window (null: the server's default); the secret stays. */
  setLimits(
    id: string,
    limits: { limit: number | null; window: number | null },
  ): Promise<ApiKeyRecord>;
  /** Removes a revoked key for good; throws when it is not revoked (revoke it first). */
  delete(id: string): Promise<ApiKeyRecord>;
  /** A number that changes whenever any key changes (cheap to poll). */
  version(): Promise<string>;
}

/** A fresh random key with the recognisable prefix. */
function generateKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(KEY_BYTES));
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return KEY_PREFIX + btoa(binary).replaceAll("+", "-").replaceAll("/", "_");
}

/** Hex SHA-256 of a key (synchronous, allocation-light: it runs on every keyed request). */
export function hashKey(key: string): string {
  return sha256Hex(key);
}

/**
 * Compares two hex hashes in time that depends only on their length (every
 * character is visited; no early exit on the first difference).
 */
export function hashesEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** Thrown when deleting a key that is still active. */
export class ActiveKeyError extends Error {
  constructor(id: string) {
    super(`API key "${id}" is active: revoke it first ("keys revoke ${id}"), then delete it`);
    this.name = "ActiveKeyError";
  }
}

/** Thrown for an unknown key id; the message names it. */
export class UnknownKeyError extends Error {
  constructor(id: string) {
    super(`No API key with id "${id}": see "keys list"`);
    this.name = "UnknownKeyError";
  }
}

function newId(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 12);
}

function newRecord(options: NewKeyOptions, key: string, now: Date): ApiKeyRecord {
  if (options.name.trim() === "") throw new Error("A key needs a non-empty --name");
  return {
    id: newId(),
    name: options.name.trim(),
    hash: hashKey(key),
    created: now.toISOString(),
    rotated: null,
    limit: options.limit ?? null,
    window: options.window ?? null,
    revoked: false,
  };
}

const ID = (id: string) => ["keys", "id", id];
const HASH = (hash: string) => ["keys", "hash", hash];
const VERSION = ["keys", "version"];

const DEFAULTS = ["keys", "defaults"];

/** The default limit and window of the server that last started on a KV, and when it started. */
export interface ServerDefaults {
  /** Requests per window (0: unlimited), IPINTEL_RATE_LIMIT of that server. */
  limit: number;
  /** Seconds, IPINTEL_RATE_WINDOW of that server. */
  window: number;
  /** ISO time the server recorded them. */
  recorded: string;
}

/** Records a starting server's default limit and window, for `keys list` to show. */
export async function recordServerDefaults(
  kv: Deno.Kv,
  defaults: { limit: number; window: number },
  now: Date = new Date(),
  busy: BusyRetry = new BusyRetry(),
): Promise<void> {
  const value: ServerDefaults = { ...defaults, recorded: now.toISOString() };
  await busy.run(() => kv.set(DEFAULTS, value));
}

/** The defaults the last server started on this KV recorded; null when none has. */
export async function readServerDefaults(
  kv: Deno.Kv,
  busy: BusyRetry = new BusyRetry(),
): Promise<ServerDefaults | null> {
  const { value } = await busy.run(() => kv.get<ServerDefaults>(DEFAULTS));
  return value !== null && Number.isInteger(value.limit) && Number.isInteger(value.window) &&
      value.window > 0
    ? value
    : null;
}

/** The key store on a Deno KV handle opened by the caller. */
export class KvKeyStore implements KeyStore {
  constructor(
    private readonly kv: Deno.Kv,
    private readonly now: () => Date = () => new Date(),
    private readonly busy: BusyRetry = new BusyRetry(),
  ) {}

  async create(options: NewKeyOptions): Promise<IssuedKey> {
    const key = generateKey();
    const record = newRecord(options, key, this.now());
    const op = this.kv.atomic()
      .check({ key: ID(record.id), versionstamp: null })
      .set(ID(record.id), record)
      .set(HASH(record.hash), record.id)
      .sum(VERSION, 1n);
    // A commit that threw "database is locked" wrote nothing: committing it again is safe.
    const result = await this.busy.run(() => op.commit());
    if (!result.ok) throw new Error("Could not store the new key: try again");
    return { record, key };
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.busy.run(async () => {
      const records: ApiKeyRecord[] = [];
      for await (const entry of this.kv.list<ApiKeyRecord>({ prefix: ["keys", "id"] })) {
        records.push(entry.value);
      }
      return records.sort((a, b) => a.created.localeCompare(b.created));
    });
  }

  revoke(id: string): Promise<ApiKeyRecord> {
    return this.update(id, (record) => ({ record: { ...record, revoked: true } }));
  }

  async rotate(id: string): Promise<IssuedKey> {
    const key = generateKey();
    const record = await this.update(id, (record) => ({
      record: { ...record, hash: hashKey(key), rotated: this.now().toISOString() },
      oldHash: record.hash,
    }));
    return { record, key };
  }

  setLimits(
    id: string,
    { limit, window }: { limit: number | null; window: number | null },
  ): Promise<ApiKeyRecord> {
    return this.update(id, (record) => ({ record: { ...record, limit, window } }));
  }

  async delete(id: string): Promise<ApiKeyRecord> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const deleted = await this.busy.run(async () => {
        const entry = await this.kv.get<ApiKeyRecord>(ID(id));
        if (!entry.value) throw new UnknownKeyError(id);
        if (!entry.value.revoked) throw new ActiveKeyError(id);
        const result = await this.kv.atomic().check(entry).delete(ID(id))
          .delete(HASH(entry.value.hash)).sum(VERSION, 1n).commit();
        return result.ok ? entry.value : null;
      });
      if (deleted) return deleted;
    }
    throw new Error(`Could not delete API key "${id}": too many concurrent changes`);
  }

  async version(): Promise<string> {
    const entry = await this.busy.run(() => this.kv.get<Deno.KvU64>(VERSION));
    return entry.value ? String(entry.value.value) : "0";
  }

  /** Read-check-write of one record, retried when another writer got there first. */
  private async update(
    id: string,
    change: (record: ApiKeyRecord) => { record: ApiKeyRecord; oldHash?: string },
  ): Promise<ApiKeyRecord> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const updated = await this.busy.run(async () => {
        const entry = await this.kv.get<ApiKeyRecord>(ID(id));
        if (!entry.value) throw new UnknownKeyError(id);
        const { record, oldHash } = change(entry.value);
        const op = this.kv.atomic().check(entry).set(ID(id), record).sum(VERSION, 1n);
        if (oldHash !== undefined) op.delete(HASH(oldHash)).set(HASH(record.hash), id);
        return (await op.commit()).ok ? record : null;
      });
      if (updated) return updated;
    }
    throw new Error(`Could not update API key "${id}": too many concurrent changes`);
  }
}

/** The same store in memory, for tests. */
export class MemoryKeyStore implements KeyStore {
  private readonly records = new Map<string, ApiKeyRecord>();
  private changes = 0;

  constructor(private readonly now: () => Date = () => new Date()) {}

  create(options: NewKeyOptions): Promise<IssuedKey> {
    return settle(() => {
      const key = generateKey();
      const record = newRecord(options, key, this.now());
      this.records.set(record.id, record);
      this.changes++;
      return { record: { ...record }, key };
    });
  }

  list(): Promise<ApiKeyRecord[]> {
    return settle(() =>
      [...this.records.values()].map((r) => ({ ...r }))
        .sort((a, b) => a.created.localeCompare(b.created))
    );
  }

  revoke(id: string): Promise<ApiKeyRecord> {
    return settle(() => this.update(id, { revoked: true }));
  }

  rotate(id: string): Promise<IssuedKey> {
    return settle(() => {
      const key = generateKey();
      const record = this.update(id, { hash: hashKey(key), rotated: this.now().toISOString() });
      return { record, key };
    });
  }

  setLimits(
    id: string,
    { limit, window }: { limit: number | null; window: number | null },
  ): Promise<ApiKeyRecord> {
    return settle(() => this.update(id, { limit, window }));
  }

  delete(id: string): Promise<ApiKeyRecord> {
    return settle(() => {
      const record = this.records.get(id);
      if (!record) throw new UnknownKeyError(id);
      if (!record.revoked) throw new ActiveKeyError(id);
      this.records.delete(id);
      this.changes++;
      return { ...record };
    });
  }

  version(): Promise<string> {
    return settle(() => String(this.changes));
  }

  private update(id: string, patch: Partial<ApiKeyRecord>): ApiKeyRecord {
    const record = this.records.get(id);
    if (!record) throw new UnknownKeyError(id);
    const updated = { ...record, ...patch };
    this.records.set(id, updated);
    this.changes++;
    return { ...updated };
  }
}

/** Runs `fn` as a promise, so that a throw becomes a rejection like the KV store's. */
function settle<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => resolve(fn()));
}
