/**
 * Checks an untrusted MaxMind DB before it is served: the metadata, the
 * search tree (every record of every node points at a node, "empty" or the
 * start of a value in the data section), that every record the tree points at
 * is a map (valid files may hold strings or arrays there; every source we read
 * needs a map), the separator, every value of the data and metadata sections
 * decoded strictly (verify_data.ts: what libmaxminddb refuses, we refuse), a
 * sample of records, and that the database is of the expected kind.
 */

import { type MmdbDatabase, openMmdb } from "../mmdb/reader.ts";
import type { DatabaseKind } from "./manifest.ts";
import { checkDataSection } from "./verify_data.ts";

/** Which `database_type` values each kind accepts (MaxMind, DB-IP, ip-location-db and ours). */
const TYPE_PATTERNS: Record<DatabaseKind, RegExp> = {
  city: /city|country/i,
  asn: /asn/i,
  isp: /isp/i,
  "connection-type": /connection.?type/i,
  "anonymous-ip": /anonymous.?ip/i,
  domain: /domain/i,
};

/** Addresses looked up in every check: records found must decode. */
const SAMPLES = [
  "8.8.8.8",
  "1.1.1.1",
  "81.2.69.142",
  "185.220.101.1",
  "2001:4860:4860::8888",
  "2a02:ec0::1",
];

/**
 * The version of these checks. An installer that ran them records it in the
 * file's manifest entry (`verifier`), and the file is opened later without
 * running them again as long as its sha256 still matches (data_set.ts). Raise
 * it whenever a check is added or made stricter: files an older version
 * checked are then walked again at open.
 */
export const VERIFIER_VERSION = 1;

export interface VerifiedMmdb<T> {
  db: MmdbDatabase<T>;
  /** Networks in the tree that hold data. */
  networks: number;
}

/**
 * Opens and checks the bytes; throws an error saying what is wrong.
 * `kind` (when given) must match the metadata's `database_type`; `label` names
 * the file in the errors of later lookups.
 */
export function verifyMmdb<T>(
  bytes: Uint8Array,
  options: { kind?: DatabaseKind; cacheSize?: number; label?: string } = {},
): VerifiedMmdb<T> {
  let db: MmdbDatabase<T>;
  try {
    db = openMmdb<T>(bytes, { cacheSize: options.cacheSize, label: options.label });
  } catch (error) {
    throw new Error(`Not a valid MaxMind DB: ${(error as Error).message}`);
  }
  const m = db.metadata;
  if (m.ipVersion !== 4 && m.ipVersion !== 6) {
    throw new Error(`Invalid MaxMind DB: ip_version ${m.ipVersion} is not 4 or 6`);
  }
  if (options.kind && !TYPE_PATTERNS[options.kind].test(m.databaseType)) {
    throw new Error(
      `database_type "${m.databaseType}" is not a database of kind "${options.kind}"`,
    );
  }
  const networks = checkTree(bytes, m.nodeCount, m.recordSize);
  if (networks === 0) throw new Error("Invalid MaxMind DB: the tree holds no data");
  for (const ip of SAMPLES) {
    if (m.ipVersion === 4 && ip.includes(":")) continue;
    try {
      const record = db.get(ip);
      if (record !== null && (typeof record !== "object" || Array.isArray(record))) {
        throw new Error(
          `expected a map, found ${Array.isArray(record) ? "an array" : typeof record}`,
        );
      }
    } catch (error) {
      throw new Error(
        `Invalid MaxMind DB: the record of ${ip} does not decode: ${(error as Error).message}`,
      );
    }
  }
  return { db, networks };
}

/** Walks every node of the tree; returns how many records point at data. */
function checkTree(bytes: Uint8Array, nodeCount: number, recordSize: number): number {
  const nodeBytes = recordSize / 4;
  const treeSize = nodeCount * nodeBytes;
  const metadataStart = findMetadataStart(bytes);
  const dataSize = metadataStart - treeSize - 16;
  if (!Number.isSafeInteger(treeSize) || dataSize < 0) {
    throw new Error(`Invalid MaxMind DB: a tree of ${nodeCount} nodes does not fit the file`);
  }
  for (let i = treeSize; i < treeSize + 16; i++) {
    if (bytes[i] !== 0) throw new Error("Invalid MaxMind DB: no data section separator");
  }
  let networks = 0;
  const limit = nodeCount + 16 + dataSize;
  const dataStart = treeSize + 16;
  const metadata = metadataStart + MARKER.length;
  checkDataSection(bytes, metadata, bytes.length - metadata, "metadata section");
  const starts = checkDataSection(bytes, dataStart, dataSize);
  for (let node = 0; node < nodeCount; node++) {
    const at = node * nodeBytes;
    let left: number, right: number;
    if (recordSize === 24) {
      left = (bytes[at]! << 16) | (bytes[at + 1]! << 8) | bytes[at + 2]!;
      right = (bytes[at + 3]! << 16) | (bytes[at + 4]! << 8) | bytes[at + 5]!;
    } else if (recordSize === 28) {
      const middle = bytes[at + 3]!;
      left = ((middle & 0xf0) << 20) | (bytes[at]! << 16) | (bytes[at + 1]! << 8) | bytes[at + 2]!;
      right = ((middle & 0x0f) << 24) | (bytes[at + 4]! << 16) | (bytes[at + 5]! << 8) |
        bytes[at + 6]!;
    } else if (recordSize === 32) {
      left = ((bytes[at]! << 24) >>> 0) + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) |
        bytes[at + 3]!);
      right = ((bytes[at + 4]! << 24) >>> 0) + ((bytes[at + 5]! << 16) |
        (bytes[at + 6]! << 8) | bytes[at + 7]!);
    } else {
      throw new Error(`Invalid MaxMind DB: record_size ${recordSize} is not 24, 28 or 32`);
    }
    for (const record of [left, right]) {
      if (record <= nodeCount) continue; // another node, or "no data"
      if (record < nodeCount + 16 || record >= limit) {
        throw new Error(
          `Invalid MaxMind DB: node ${node} points outside the data section (${record})`,
        );
      }
      if (!starts[record - nodeCount - 16]) {
        throw new Error(
          `Invalid MaxMind DB: node ${node} points inside a value of the data section (${record})`,
        );
      }
      const type = recordType(bytes, dataStart, dataSize, record - nodeCount - 16);
      if (type !== T_MAP) {
        throw new Error(
          `Invalid MaxMind DB: node ${node} points at ${TYPE_NAMES[type] ?? `type ${type}`}, ` +
            "not a map (every record must be a map)",
        );
      }
      networks++;
    }
  }
  return networks;
}

const T_POINTER = 1;
const T_MAP = 7;
const TYPE_NAMES: Record<number, string> = {
  [T_POINTER]: "a pointer to a pointer",
  2: "a utf8_string",
  3: "a double",
  4: "bytes",
  5: "a uint16",
  6: "a uint32",
  8: "an int32",
  9: "a uint64",
  10: "a uint128",
  11: "an array",
  12: "a data cache container",
  13: "an end marker",
  14: "a boolean",
  15: "a float",
  [-1]: "a pointer outside the data section",
};

/**
 * The type of the value at `offset` in the data section, reading only its control
 * byte(s); a pointer there is followed once. -1 when it leads outside the section.
 */
function recordType(bytes: Uint8Array, start: number, size: number, offset: number): number {
  for (let hops = 0;; hops++) {
    if (offset < 0 || offset >= size) return -1;
    const control = bytes[start + offset]!;
    const type = control >> 5;
    if (type === 0) return offset + 1 < size ? 7 + bytes[start + offset + 1]! : -1;
    if (type !== T_POINTER) return type;
    if (hops === 1) return T_POINTER;
    const at = start + offset + 1;
    const v = control & 7;
    const sizeBits = (control >> 3) & 3;
    if (offset + 1 + sizeBits + 1 > size) return -1;
    offset = sizeBits === 0
      ? (v << 8) | bytes[at]!
      : sizeBits === 1
      ? ((v << 16) | (bytes[at]! << 8) | bytes[at + 1]!) + 2048
      : sizeBits === 2
      ? ((v << 24) | (bytes[at]! << 16) | (bytes[at + 1]! << 8) | bytes[at + 2]!) + 526336
      : ((bytes[at]! << 24) >>> 0) +
        ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!);
  }
}

const MARKER = [0xab, 0xcd, 0xef, ...new TextEncoder().encode("MaxMind.com")];

/** The offset of the metadata marker (the last one in the file, as the format says). */
function findMetadataStart(bytes: Uint8Array): number {
  const stop = Math.max(0, bytes.length - 128 * 1024);
  outer: for (let i = bytes.length - MARKER.length; i >= stop; i--) {
    for (let j = 0; j < MARKER.length; j++) if (bytes[i + j] !== MARKER[j]) continue outer;
    return i;
  }
  throw new Error("Invalid MaxMind DB: no metadata marker");
}
