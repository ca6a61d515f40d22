/**
 * The data section of a compiled feed tree, written as the records are
 * needed: `{matches: [match, ...]}` (the most specific first), each match
 * `{source, network[, country, region, city, postal]}` (FeedMatchRecord).
 * A match is written once and pointed to from every record naming it; map
 * keys, list names and short repeated place fields likewise. The state is a
 * number per match, not an object.
 */

import {
  ChunkedByteWriter,
  pointerLength,
  writeArrayHeader,
  writeMapHeader,
  writePointer,
  writeString,
} from "../mmdb/writer/encode.ts";
import type { EntryTable, NamedFeed } from "./feed_entries.ts";

/** Distinct strings kept for pointers: a hostile list of unique cities must not grow it for ever. */
const MAX_SHARED_STRINGS = 65_536;

/** "Not written yet": data offsets stay below it (the pointer limit). */
export const NONE = 0xffffffff;

const PLACE_KEYS = ["country", "region", "city", "postal"] as const;

export class FeedData {
  readonly w = new ChunkedByteWriter();
  /** Offset of each match's map, NONE until written. */
  readonly #matchAt: Uint32Array;
  readonly #strings = new Map<string, number>();

  constructor(readonly feeds: readonly NamedFeed[], readonly table: EntryTable) {
    this.#matchAt = new Uint32Array(table.listOf.length).fill(NONE);
  }

  /** Writes `{matches: [...]}` for these matches, the most specific first; returns its offset. */
  record(matches: readonly number[]): number {
    const w = this.w;
    const at = w.offset;
    writeMapHeader(w, 1);
    this.#shared("matches");
    writeArrayHeader(w, matches.length);
    for (const m of matches) this.#match(m);
    if (w.offset >= 0xffffffff) throw new Error("the data section exceeds 4 GiB (pointer limit)");
    return at;
  }

  /** The data section's bytes, in chunks; the writer lets them go. */
  chunks(): Uint8Array[] {
    return this.w.chunks();
  }

  #match(m: number): void {
    const w = this.w;
    const at = this.#matchAt[m]!;
    if (at !== NONE) return writePointer(w, at);
    this.#matchAt[m] = w.offset;
    const { name, feed } = this.feeds[this.table.listOf[m]!]!;
    const line = this.table.lineOf[m]!;
    const range = line < 0 ? feed.ranges[-1 - line]! : null;
    const place = line >= 0 ? feed.places?.[line] : undefined;
    const fields = place ? PLACE_KEYS.filter((key) => place[key] !== null) : [];
    writeMapHeader(w, 2 + fields.length);
    this.#shared("source");
    this.#shared(name);
    this.#shared("network");
    writeString(w, range ? `${range[0]}-${range[1]}` : feed.networks[line]!);
    for (const key of fields) {
      this.#shared(key);
      this.#shared(place![key]!);
    }
  }

  /** A string likely repeated: a pointer to its first copy when that is shorter. */
  #shared(s: string): void {
    const w = this.w;
    const at = this.#strings.get(s);
    if (at !== undefined && pointerLength(at) <= s.length) return writePointer(w, at);
    if (at === undefined && this.#strings.size < MAX_SHARED_STRINGS) this.#strings.set(s, w.offset);
    writeString(w, s);
  }
}
