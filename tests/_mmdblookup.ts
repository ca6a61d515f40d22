/**
 * Runs libmaxminddb's `mmdblookup` (Debian package mmdb-bin), an independent
 * MaxMind DB reader, and parses its dump, so tests can compare our reader and
 * writer against it. The one place that runs and parses mmdblookup.
 *
 * `mmdblookup` prints a JSON-like dump with a type after each scalar:
 *
 * ```text
 *   {
 *     "autonomous_system_number":
 *       15169 <uint32>
 *     "names":
 *       {
 *         "en":
 *           "Google LLC" <utf8_string>
 *       }
 *     "subdivisions":
 *       [ ... ]
 *   }
 * ```
 *
 * Strings are printed raw (no escaping), doubles and floats with `%f` (six
 * decimals), booleans as `true`/`false`, bytes as hex, uint128 as `0x...`.
 * With `--verbose` the dump follows the metadata and a `Record prefix length: N` line.
 *
 * @module
 */

/**
 * A decoded value with its MaxMind DB type name (`utf8_string`, `uint32`, `map`, ...).
 * Scalars hold the values {@link MmdblookupValue} does; maps keep key order as
 * `[key, Typed][]` entries, arrays are `Typed[]`.
 */
export interface Typed {
  t: string;
  v: unknown;
}

/** A decoded value. uint64 and uint128 become bigint; bytes become Uint8Array. */
export type MmdblookupValue =
  | string
  | number
  | bigint
  | boolean
  | Uint8Array
  | MmdblookupValue[]
  | { [key: string]: MmdblookupValue };

const BINARY = "mmdblookup";

let available: boolean | null = null;

/** Whether `mmdblookup` can be run (checked once per process). */
export function mmdblookupAvailable(): boolean {
  if (available === null) {
    try {
      available = new Deno.Command(BINARY, { args: ["--version"], stdout: "null", stderr: "null" })
        .outputSync().success;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      available = false;
    }
  }
  return available;
}

/** Why a test that needs `mmdblookup` is ignored (in its name) when it is missing. */
export const MMDBLOOKUP_MISSING =
  "mmdblookup (libmaxminddb, Debian package mmdb-bin) is not installed";

// mmdblookup's exit statuses (libmaxminddb bin/mmdblookup.c).
const EXIT_NOT_FOUND = 6;
const EXIT_PATH_MISMATCH = 5;

const PREFIX_LINE = /^ *Record prefix length: (\d+)\n/m;

/** What one `mmdblookup` run found. */
export interface MmdblookupResult {
  /**
   * The record (or the value at the path), typed; `null` when the database has no
   * entry for the address, `undefined` when the entry exists but the path leads nowhere.
   */
  value: Typed | null | undefined;
  /**
   * With `verbose`, the prefix length libmaxminddb reports (it counts in the IPv6
   * tree, so IPv4 /n in an IPv6 database is 96 + n), whether found or not; else null.
   */
  prefixLength: number | null;
  /** With `verbose`, the metadata text printed before the prefix line; else "". */
  metadata: string;
}

/**
 * Runs `mmdblookup --file <file> --ip <ip> [--verbose] [path...]` and parses its output.
 * Any failure other than "not found" and "path does not match" (unreadable file,
 * unparsable address, output it cannot parse) throws with mmdblookup's message.
 * Note that mmdblookup resolves `ip` with getaddrinfo, which accepts forms we reject
 * (e.g. "1.2.3" means 1.2.0.3).
 */
export async function runMmdblookup(
  file: string,
  ip: string,
  { path = [], verbose = false }: { path?: readonly (string | number)[]; verbose?: boolean } = {},
): Promise<MmdblookupResult> {
  const args = ["--file", file, "--ip", ip, ...(verbose ? ["--verbose"] : []), ...path.map(String)];
  const output = await new Deno.Command(BINARY, { args, stdout: "piped", stderr: "piped" })
    .output();
  const decoder = new TextDecoder();
  const stderr = decoder.decode(output.stderr).trim();
  let stdout = decoder.decode(output.stdout);
  const failure = () => `mmdblookup ${args.join(" ")} exited ${output.code}: ${stderr}`;
  const notFound = output.code === EXIT_NOT_FOUND && /Could not find an entry/.test(stderr);
  const noPath = output.code === EXIT_PATH_MISMATCH && /lookup path does not match/.test(stderr);
  if (!output.success && !notFound && !noPath) throw new Error(failure());
  let prefixLength: number | null = null;
  let metadata = "";
  if (verbose) {
    const match = PREFIX_LINE.exec(stdout);
    if (!match) throw new Error(`no "Record prefix length" line from ${failure()}\n${stdout}`);
    prefixLength = Number(match[1]);
    metadata = stdout.slice(0, match.index);
    stdout = stdout.slice(match.index + match[0].length);
  }
  if (notFound || noPath) {
    if (stdout.trim() !== "") throw new Error(`unexpected output from ${failure()}\n${stdout}`);
    return { value: notFound ? null : undefined, prefixLength, metadata };
  }
  return { value: parseMmdblookupDumpTyped(stdout), prefixLength, metadata };
}

/**
 * Runs `mmdblookup --file <file> --ip <ip> [path...]` and returns the plain value:
 * `null` when the database has no entry for the address and `undefined` when the
 * entry exists but `path` does not lead to a value. Throws as {@link runMmdblookup}.
 */
export async function mmdblookup(
  file: string,
  ip: string,
  path: readonly (string | number)[] = [],
): Promise<MmdblookupValue | null | undefined> {
  const { value } = await runMmdblookup(file, ip, { path });
  return value == null ? value : plain(value);
}

/** Parses one value as `mmdblookup` dumps it (the whole record, or the value at a path). */
export function parseMmdblookupDump(text: string): MmdblookupValue {
  return plain(parseMmdblookupDumpTyped(text));
}

/** {@link parseMmdblookupDump}, keeping each value's type name. */
export function parseMmdblookupDumpTyped(text: string): Typed {
  const parser = new DumpParser(text);
  const value = parser.value();
  parser.expectEnd();
  return value;
}

/** The plain value of a typed one: maps become objects, type names are dropped. */
export function plain(typed: Typed): MmdblookupValue {
  if (typed.t === "map") {
    return Object.fromEntries((typed.v as [string, Typed][]).map(([k, v]) => [k, plain(v)]));
  }
  if (typed.t === "array") return (typed.v as Typed[]).map(plain);
  return typed.v as MmdblookupValue;
}

const STRING_END = '" <utf8_string>\n';
const KEY_END = '": \n';

class DumpParser {
  #pos = 0;
  constructor(readonly text: string) {}

  value(): Typed {
    this.#skipSpace();
    const c = this.text[this.#pos];
    if (c === "{") return this.#map();
    if (c === "[") return this.#array();
    if (c === '"') return this.#string();
    return this.#scalar();
  }

  expectEnd(): void {
    this.#skipSpace();
    if (this.#pos < this.text.length) this.#fail("unexpected text after the value");
  }

  #map(): Typed {
    this.#pos++; // {
    const entries: [string, Typed][] = [];
    for (;;) {
      this.#skipSpace();
      if (this.text[this.#pos] === "}") {
        this.#pos++;
        return { t: "map", v: entries };
      }
      if (this.text[this.#pos] !== '"') this.#fail("expected a map key or }");
      const end = this.text.indexOf(KEY_END, this.#pos + 1);
      if (end === -1) this.#fail("unterminated map key");
      const key = this.text.slice(this.#pos + 1, end);
      this.#pos = end + KEY_END.length;
      entries.push([key, this.value()]);
    }
  }

  #array(): Typed {
    this.#pos++; // [
    const items: Typed[] = [];
    for (;;) {
      this.#skipSpace();
      if (this.text[this.#pos] === "]") {
        this.#pos++;
        return { t: "array", v: items };
      }
      if (this.#pos >= this.text.length) this.#fail("unterminated array");
      items.push(this.value());
    }
  }

  #string(): Typed {
    // Strings are not escaped: the value runs to the first `" <utf8_string>` line end.
    const end = this.text.indexOf(STRING_END, this.#pos + 1);
    if (end === -1) this.#fail("unterminated string");
    const value = this.text.slice(this.#pos + 1, end);
    this.#pos = end + STRING_END.length;
    return { t: "utf8_string", v: value };
  }

  #scalar(): Typed {
    let end = this.text.indexOf("\n", this.#pos);
    if (end === -1) end = this.text.length;
    const line = this.text.slice(this.#pos, end);
    const match = /^(?:(\S+) )?<(\w+)>$/.exec(line);
    if (!match) this.#fail(`expected "<value> <type>", got ${JSON.stringify(line)}`);
    this.#pos = end;
    const [, raw = "", t = ""] = match;
    switch (t) {
      case "uint16":
      case "uint32":
      case "int32":
      case "double":
      case "float": {
        const n = Number(raw);
        if (raw === "" || Number.isNaN(n)) this.#fail(`bad ${t} ${JSON.stringify(raw)}`);
        return { t, v: n };
      }
      case "uint64":
      case "uint128":
        if (!/^(?:\d+|0x[0-9A-Fa-f]+)$/.test(raw)) this.#fail(`bad ${t} ${JSON.stringify(raw)}`);
        return { t, v: BigInt(raw) };
      case "boolean":
        if (raw !== "true" && raw !== "false") this.#fail(`bad boolean ${JSON.stringify(raw)}`);
        return { t, v: raw === "true" };
      case "bytes": {
        if (!/^(?:[0-9A-Fa-f]{2})*$/.test(raw)) this.#fail(`bad bytes ${JSON.stringify(raw)}`);
        return { t, v: Uint8Array.from(raw.match(/../g) ?? [], (h) => parseInt(h, 16)) };
      }
      default:
        this.#fail(`unknown type <${t}>`);
    }
  }

  #skipSpace(): void {
    while (this.#pos < this.text.length && /\s/.test(this.text[this.#pos]!)) this.#pos++;
  }

  #fail(reason: string): never {
    throw new Error(`Cannot parse mmdblookup output at offset ${this.#pos}: ${reason}`);
  }
}
