/**
 * Runs libmaxminddb's `mmdblookup` (Debian package mmdb-bin), an independent
 * MaxMind DB reader, and parses its dump into plain values, so tests can
 * compare our reader and writer against it.
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
 *
 * @module
 */

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

/** The message a test prints when it skips for want of `mmdblookup`. */
export const MMDBLOOKUP_SKIP_MESSAGE =
  "SKIPPED: mmdblookup (Debian package mmdb-bin) is not installed";

// mmdblookup's exit statuses (libmaxminddb bin/mmdblookup.c).
const EXIT_NOT_FOUND = 6;
const EXIT_PATH_MISMATCH = 5;

/**
 * Runs `mmdblookup --file <file> --ip <ip> [path...]` and parses its output.
 * Returns `null` when the database has no entry for the address and
 * `undefined` when the entry exists but `path` does not lead to a value.
 * Any other failure (unreadable file, unparsable address) throws with
 * mmdblookup's message. Note that mmdblookup resolves `ip` with getaddrinfo,
 * which accepts forms we reject (e.g. "1.2.3" means 1.2.0.3).
 */
export async function mmdblookup(
  file: string,
  ip: string,
  path: readonly (string | number)[] = [],
): Promise<MmdblookupValue | null | undefined> {
  const output = await new Deno.Command(BINARY, {
    args: ["--file", file, "--ip", ip, ...path.map(String)],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  const stderr = decoder.decode(output.stderr).trim();
  if (output.code === EXIT_NOT_FOUND && /Could not find an entry/.test(stderr)) return null;
  if (output.code === EXIT_PATH_MISMATCH && /lookup path does not match/.test(stderr)) {
    return undefined;
  }
  if (!output.success) {
    throw new Error(`mmdblookup --file ${file} --ip ${ip} exited ${output.code}: ${stderr}`);
  }
  return parseMmdblookupDump(decoder.decode(output.stdout));
}

/** Parses one value as `mmdblookup` dumps it (the whole record, or the value at a path). */
export function parseMmdblookupDump(text: string): MmdblookupValue {
  const parser = new DumpParser(text);
  const value = parser.value();
  parser.expectEnd();
  return value;
}

const STRING_END = '" <utf8_string>\n';
const KEY_END = '": \n';

class DumpParser {
  #pos = 0;
  constructor(readonly text: string) {}

  value(): MmdblookupValue {
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

  #map(): { [key: string]: MmdblookupValue } {
    this.#pos++; // {
    const entries: [string, MmdblookupValue][] = [];
    for (;;) {
      this.#skipSpace();
      if (this.text[this.#pos] === "}") {
        this.#pos++;
        return Object.fromEntries(entries);
      }
      if (this.text[this.#pos] !== '"') this.#fail("expected a map key or }");
      const end = this.text.indexOf(KEY_END, this.#pos + 1);
      if (end === -1) this.#fail("unterminated map key");
      const key = this.text.slice(this.#pos + 1, end);
      this.#pos = end + KEY_END.length;
      entries.push([key, this.value()]);
    }
  }

  #array(): MmdblookupValue[] {
    this.#pos++; // [
    const items: MmdblookupValue[] = [];
    for (;;) {
      this.#skipSpace();
      if (this.text[this.#pos] === "]") {
        this.#pos++;
        return items;
      }
      if (this.#pos >= this.text.length) this.#fail("unterminated array");
      items.push(this.value());
    }
  }

  #string(): string {
    // Strings are not escaped: the value runs to the first `" <utf8_string>` line end.
    const end = this.text.indexOf(STRING_END, this.#pos + 1);
    if (end === -1) this.#fail("unterminated string");
    const value = this.text.slice(this.#pos + 1, end);
    this.#pos = end + STRING_END.length;
    return value;
  }

  #scalar(): MmdblookupValue {
    let end = this.text.indexOf("\n", this.#pos);
    if (end === -1) end = this.text.length;
    const line = this.text.slice(this.#pos, end);
    const match = /^(?:(\S+) )?<(\w+)>$/.exec(line);
    if (!match) this.#fail(`expected "<value> <type>", got ${JSON.stringify(line)}`);
    this.#pos = end;
    const [, raw = "", type] = match;
    switch (type) {
      case "uint16":
      case "uint32":
      case "int32":
      case "double":
      case "float": {
        const n = Number(raw);
        if (raw === "" || Number.isNaN(n)) this.#fail(`bad ${type} ${JSON.stringify(raw)}`);
        return n;
      }
      case "uint64":
      case "uint128":
        return BigInt(raw);
      case "boolean":
        if (raw !== "true" && raw !== "false") this.#fail(`bad boolean ${JSON.stringify(raw)}`);
        return raw === "true";
      case "bytes": {
        if (!/^(?:[0-9A-Fa-f]{2})*$/.test(raw)) this.#fail(`bad bytes ${JSON.stringify(raw)}`);
        return Uint8Array.from(raw.match(/../g) ?? [], (h) => parseInt(h, 16));
      }
      default:
        this.#fail(`unknown type <${type}>`);
    }
  }

  #skipSpace(): void {
    while (this.#pos < this.text.length && /\s/.test(this.text[this.#pos]!)) this.#pos++;
  }

  #fail(reason: string): never {
    throw new Error(`Cannot parse mmdblookup output at offset ${this.#pos}: ${reason}`);
  }
}
