/**
 * The server's in-memory copy of the API keys, so that checking a key costs
 * a hash and a map lookup, never a KV read. It follows the store by polling
 * its change counter: a key created, revoked or rotated on any instance
 * sharing the KV is seen within one poll interval.
 */

import { type ApiKeyRecord, hashesEqual, hashKey, type KeyStore } from "../../data/store/keys.ts";
import { ownCopy } from "../../base/cache/own_copy.ts";

export class KeyTable {
  private byHash = new Map<string, ApiKeyRecord>();
  /**
   * The hash of each secret sent lately: a caller sends the same key on every
   * request, and its SHA-256 in JavaScript is most of a keyed request's extra
   * CPU. Only hashes are kept (what a record holds), so a revoked key is
   * refused as soon as the table is read again. (The Map compares a secret
   * with a kept one only after their seeded string hashes match.)
   */
  private readonly hashes = new Map<string, string>();
  private total = 0;
  private version: string | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly store: KeyStore) {}

  /** Reads the keys again when the store's change counter moved; returns whether it did. */
  async refresh(): Promise<boolean> {
    const version = await this.store.version();
    if (version === this.version) return false;
    const records = await this.store.list();
    const byHash = new Map<string, ApiKeyRecord>();
    for (const record of records) if (!record.revoked) byHash.set(record.hash, record);
    this.byHash = byHash;
    this.total = records.length;
    this.version = version;
    return true;
  }

  /** The active key for this secret, or null (unknown, revoked or rotated away). */
  find(key: string): ApiKeyRecord | null {
    let hash = this.hashes.get(key);
    if (hash === undefined) {
      hash = hashKey(key);
      // Bounded: keys sent at random fill it, then it starts over. A text longer than any key
      // is not kept (a 30 KB header would be a 30 KB entry), and what is kept is a copy: the
      // secret may be a slice of a longer header or URL.
      if (key.length <= LONGEST_KEY_KEPT) {
        if (this.hashes.size >= HASHES_KEPT) this.hashes.clear();
        this.hashes.set(ownCopy(key), hash);
      }
    }
    const record = this.byHash.get(hash);
    // The map finds by hash; the final comparison of secret-derived bytes is constant-time.
    return record && hashesEqual(record.hash, hash) ? record : null;
  }

  /** Secrets whose hash is remembered (at most HASHES_KEPT). */
  get remembered(): number {
    return this.hashes.size;
  }

  /** Keys in the store, revoked ones included. */
  get size(): number {
    return this.total;
  }

  /**
   * Whether a key was ever created in this store (revoked and deleted ones
   * included): deleting the last key must not turn `IPINTEL_AUTH=auto` off.
   */
  get everUsed(): boolean {
    return this.total > 0 || (this.version !== null && this.version !== "0");
  }

  /**
   * Polls every `intervalMs` (no timer keeps the process alive); calls
   * `onChange` after a change, `onSuccess` after each poll that worked.
   */
  start(
    intervalMs: number,
    onError: (error: unknown) => void,
    onChange = () => {},
    onSuccess = () => {},
  ): void {
    if (this.timer !== null) return;
    // One poll at a time: a read that waits out a busy KV (up to 10 s) is not joined by more.
    let polling = false;
    const poll = () => {
      if (polling) return;
      polling = true;
      this.refresh().then((changed) => {
        onSuccess();
        if (changed) onChange();
      }).catch(onError).finally(() => polling = false);
    };
    const timer = setInterval(poll, intervalMs);
    Deno.unrefTimer(timer);
    this.timer = timer;
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}

/** Secrets whose hash {@link KeyTable.find} remembers (then it starts over). */
const HASHES_KEPT = 1024;
/** Longest secret whose hash is remembered: a key is 36 characters (`ipi_` + 32). */
const LONGEST_KEY_KEPT = 64;
