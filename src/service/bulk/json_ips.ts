/**
 * An incremental parser of the bulk JSON body `{"ips": ["<ip>", ...], "userAgent": "..."}`:
 * text goes in piece by piece, each address comes out as soon as its string
 * closes. The whole body is checked as JSON (RFC 8259), but only the keys
 * `ips` and `userAgent` of the top object are kept; other values are checked
 * and skipped. What it holds is bounded whatever the body: the nesting stack
 * of skipped values, one string cut at the item cap, one number.
 *
 * `userAgent` may follow `ips` (JSON members have no order) as long as it
 * arrives in the same piece as the first addresses, before any was handed out
 * to be answered; later than that it would come too late, and is refused.
 */

import { BadRequestError } from "../../base/errors.ts";
import { trimBulkItem } from "./items.ts";

// What the grammar expects next.
const VALUE = 0; // a value (the root, after ':' or after ',' in an array)
const VALUE_OR_CLOSE = 1; // after '['
const KEY_OR_CLOSE = 2; // after '{'
const KEY = 3; // after ',' in an object
const COLON = 4; // after a key
const COMMA_OR_CLOSE = 5; // after a value inside a container
const DONE = 6; // the root value is complete

// What the lexer is inside.
const NONE = 0;
const STRING = 1;
const LITERAL = 2;

const OBJECT = 0;
const ARRAY = 1;

/** Longest key or number text looked at (keys kept are short; numbers are skipped). */
const TOKEN_CAP = 256;
/** Longest user-agent string kept (only its first 500 characters are parsed). */
const USER_AGENT_CAP = 1024;
/** Deepest nesting accepted in skipped values. */
const DEPTH_CAP = 64;

const LITERAL_CHAR = /[-+.0-9a-zA-Z]/;
const LITERAL_FORM = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)$/;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

export class JsonIpsParser {
  userAgent: string | null = null;
  private expect = VALUE;
  private readonly stack: number[] = [];
  private lexer = NONE;
  /** The string or literal being read, cut at `cap` characters. */
  private token = "";
  private cap = 0;
  private overlong = false;
  /** An escape sequence cut by a chunk boundary (`\`, `\u12`...). */
  private escape = "";
  /** The top object's current key, while its value is read. */
  private key: string | null = null;
  private readonly seen = new Set<string>();
  private inIps = false;
  private index = 0;
  /** Addresses handed out by earlier pieces: they may have been answered already. */
  private handedOut = 0;
  /** Characters consumed before the current piece, and where the current token starts. */
  private consumed = 0;
  private position = 0;
  private trimLead = false;

  constructor(private readonly itemCap: number) {}

  push(text: string, out: string[]): void {
    this.handedOut = this.index;
    const n = text.length;
    let i = 0;
    while (i < n) {
      this.position = this.consumed + i;
      if (this.lexer === STRING) {
        i = this.readString(text, i, out);
        continue;
      }
      const c = text[i]!;
      if (this.lexer === LITERAL) {
        if (LITERAL_CHAR.test(c)) {
          if (this.token.length >= TOKEN_CAP) this.fail("a number longer than 256 characters");
          this.token += c;
          i++;
          continue;
        }
        this.endLiteral();
      }
      i++;
      if (c === " " || c === "\n" || c === "\r" || c === "\t") continue;
      this.structural(c);
    }
    this.consumed += n;
  }

  /** The body ended: it must have been one whole object with `ips` (no item is left to add). */
  end(_out: string[]): void {
    if (this.lexer === LITERAL) this.endLiteral();
    if (this.lexer === STRING || this.expect !== DONE) this.fail("end of the body");
    if (!this.seen.has("ips")) {
      throw new BadRequestError('Invalid JSON body: expected {"ips": ["<ip>", ...]}');
    }
  }

  /** One character outside strings and literals. */
  private structural(c: string): void {
    const expect = this.expect;
    if (c === '"') {
      if (expect === KEY_OR_CLOSE || expect === KEY) {
        this.startString(this.stack.length === 1 ? TOKEN_CAP : 0);
        return;
      }
      if (expect !== VALUE && expect !== VALUE_OR_CLOSE) this.unexpected(c);
      this.startValue("string");
      const item = this.inIps && this.stack.length === 2;
      const keep = item
        ? this.itemCap
        : this.atTop() && this.key === "userAgent"
        ? USER_AGENT_CAP
        : 0;
      this.startString(keep, item);
      return;
    }
    if (c === ":") {
      if (expect !== COLON) this.unexpected(c);
      this.expect = VALUE;
      return;
    }
    if (c === ",") {
      if (expect !== COMMA_OR_CLOSE) this.unexpected(c);
      this.expect = this.stack[this.stack.length - 1] === OBJECT ? KEY : VALUE;
      return;
    }
    if (c === "{" || c === "[") {
      if (expect !== VALUE && expect !== VALUE_OR_CLOSE) this.unexpected(c);
      this.startValue(c === "{" ? "object" : "array");
      if (this.stack.length >= DEPTH_CAP) this.fail(`nesting deeper than ${DEPTH_CAP}`);
      if (c === "[" && this.atTop() && this.key === "ips") this.inIps = true;
      this.stack.push(c === "{" ? OBJECT : ARRAY);
      this.expect = c === "{" ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
      return;
    }
    if (c === "}" || c === "]") {
      const top = this.stack[this.stack.length - 1];
      const closes = c === "}" ? OBJECT : ARRAY;
      const allowed = expect === COMMA_OR_CLOSE ||
        (closes === OBJECT ? expect === KEY_OR_CLOSE : expect === VALUE_OR_CLOSE);
      if (top !== closes || !allowed) this.unexpected(c);
      this.stack.pop();
      if (closes === ARRAY && this.inIps && this.stack.length === 1) this.inIps = false;
      this.valueDone();
      return;
    }
    if (LITERAL_CHAR.test(c) && (expect === VALUE || expect === VALUE_OR_CLOSE)) {
      this.startValue(/[-0-9]/.test(c) ? "number" : "literal");
      this.lexer = LITERAL;
      this.token = c;
      return;
    }
    this.unexpected(c);
  }

  /** A value begins where `expect` allowed one: checks what the top object's keys may hold. */
  private startValue(kind: "string" | "object" | "array" | "number" | "literal"): void {
    if (this.stack.length === 0 && kind !== "object") {
      throw new BadRequestError('Invalid JSON body: expected {"ips": ["<ip>", ...]}');
    }
    if (this.atTop()) {
      if (this.key === "ips" && kind !== "array") {
        throw new BadRequestError(`Invalid JSON body: "ips" must be an array, got ${kind}`);
      }
      if (this.key === "userAgent" && kind !== "string" && kind !== "literal") {
        throw new BadRequestError(`Invalid JSON body: "userAgent" must be a string, got ${kind}`);
      }
    } else if (this.inIps && this.stack.length === 2 && kind !== "string") {
      throw new BadRequestError(
        `Invalid JSON body: "ips" must hold only strings, item ${this.index + 1} is ${
          kind === "literal" ? "a literal" : `a ${kind}`
        }`,
      );
    }
  }

  /** The top object reads a value for `key` (stack: the object alone). */
  private atTop(): boolean {
    return this.stack.length === 1 && this.expect !== KEY_OR_CLOSE && this.expect !== KEY &&
      this.key !== null;
  }

  private startString(cap: number, trimLead = false): void {
    this.lexer = STRING;
    this.trimLead = trimLead;
    this.token = "";
    this.cap = cap;
    this.overlong = false;
    this.escape = "";
  }

  /** Reads string characters from `i`; returns where it stopped (after the closing quote, or the end). */
  private readString(text: string, i: number, out: string[]): number {
    const n = text.length;
    while (this.escape !== "" && i < n) {
      // An escape sequence cut by the previous chunk.
      this.escape += text[i++];
      if (this.escape.length === (this.escape[1] === "u" ? 6 : 2)) {
        this.append(this.unescape(this.escape));
        this.escape = "";
      }
    }
    let run = i;
    while (i < n) {
      const code = text.charCodeAt(i);
      if (code === 0x22) {
        if (i > run) this.append(text.slice(run, i));
        this.lexer = NONE;
        this.stringDone(out);
        return i + 1;
      }
      if (code === 0x5c) {
        if (i > run) this.append(text.slice(run, i));
        this.position = this.consumed + i;
        const sequence = text.slice(i, i + (text[i + 1] === "u" ? 6 : 2));
        i += sequence.length;
        run = i;
        if (sequence.length < 2 || (sequence[1] === "u" && sequence.length < 6)) {
          this.escape = sequence;
          return n;
        }
        this.append(this.unescape(sequence));
        continue;
      }
      if (code < 0x20) {
        this.position = this.consumed + i;
        this.fail("a control character inside a string");
      }
      i++;
    }
    if (i > run) this.append(text.slice(run, i));
    return n;
  }

  private unescape(sequence: string): string {
    if (sequence[1] === "u") {
      if (!/^\\u[0-9a-fA-F]{4}$/.test(sequence)) this.fail(`a bad escape ${sequence}`);
      return String.fromCharCode(parseInt(sequence.slice(2), 16));
    }
    const char = SIMPLE_ESCAPES[sequence[1]!];
    if (char === undefined) this.fail(`a bad escape ${JSON.stringify(sequence)}`);
    return char;
  }

  /** Keeps string text up to the cap (leading spaces of an item are not counted). */
  private append(piece: string): void {
    if (this.cap === 0 || this.overlong) return;
    const text = this.token === "" && this.trimLead
      ? piece.replace(/^[ \t]+/, "")
      : this.token + piece;
    if (text.length > this.cap) {
      this.token = text.slice(0, this.cap);
      this.overlong = true;
    } else {
      this.token = text;
    }
  }

  private stringDone(out: string[]): void {
    const text = this.overlong ? `${this.token}…` : this.token;
    if (this.expect === KEY_OR_CLOSE || this.expect === KEY) {
      this.expect = COLON;
      if (this.stack.length !== 1) return;
      if (this.seen.has(text) && (text === "ips" || text === "userAgent")) {
        throw new BadRequestError(`Invalid JSON body: "${text}" appears twice`);
      }
      if (text === "userAgent" && this.seen.has("ips") && this.handedOut > 0) {
        throw new BadRequestError(
          'Invalid JSON body: in a long body "userAgent" must come before "ips" (the addresses are answered as they are read)',
        );
      }
      this.seen.add(text);
      this.key = text;
      return;
    }
    if (this.inIps && this.stack.length === 2) {
      this.index++;
      out.push(trimBulkItem(text));
    } else if (this.atTop() && this.key === "userAgent") {
      this.userAgent = text;
    }
    this.valueDone();
  }

  private endLiteral(): void {
    this.lexer = NONE;
    if (!LITERAL_FORM.test(this.token)) {
      this.fail(`an invalid literal ${JSON.stringify(this.token)}`);
    }
    if (this.atTop() && this.key === "userAgent") {
      if (this.token !== "null") {
        throw new BadRequestError(
          `Invalid JSON body: "userAgent" must be a string, got ${this.token}`,
        );
      }
      this.userAgent = null;
    }
    this.valueDone();
  }

  /** A value ended: the container expects a comma or its end, the root nothing more. */
  private valueDone(): void {
    if (this.stack.length === 1) this.key = null;
    this.expect = this.stack.length === 0 ? DONE : COMMA_OR_CLOSE;
  }

  private unexpected(c: string): never {
    this.fail(this.expect === DONE ? `${JSON.stringify(c)} after the end` : JSON.stringify(c));
  }

  private fail(what: string): never {
    throw new BadRequestError(
      `Malformed JSON body: unexpected ${what} at character ${this.position + 1}`,
    );
  }
}
