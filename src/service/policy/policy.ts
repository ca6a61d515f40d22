/**
 * The edge policy (`IPINTEL_POLICY`): a default action and ordered rules, each
 * a name, an action and conditions. Read strictly: an unknown field, a bad
 * CIDR, an unknown country code... is a PolicyError naming the rule and the
 * problem, because a typo in a gate silently lets traffic through.
 *
 * ```json
 * { "default": "allow", "cacheSeconds": 60,
 *   "rules": [
 *     { "name": "office",  "action": "allow",  "cidr": ["203.0.113.0/24"] },
 *     { "name": "no-tor",  "action": "deny",   "security": ["tor"] },
 *     { "name": "embargo", "action": "deny",   "country": ["KP"] },
 *     { "name": "watch",   "action": "report", "security": ["vpn", "hosting"] } ] }
 * ```
 *
 * First matching rule wins; within a rule every condition must hold; the
 * values of one condition are alternatives.
 */

import { continents } from "countries-list";
import { ConfigError } from "../../base/config.ts";
import { countryFacts } from "../../core/place/country.ts";
import { type Cidr, parseCidr } from "../../base/ip/cidr.ts";
import { SECURITY_TAGS, TAG_BITS } from "./facts.ts";
import { closest } from "../../base/suggest.ts";

/** What a rule does: `report` allows and tags (to watch a rule before enforcing it). */
export const RULE_ACTIONS = ["allow", "deny", "report"] as const;
export type RuleAction = typeof RULE_ACTIONS[number];
export type DefaultAction = "allow" | "deny";

/** The conditions a rule may hold, in the order their matches are reported. */
export const CONDITIONS = ["cidr", "country", "continent", "asn", "security"] as const;
export type ConditionName = typeof CONDITIONS[number];

/** One rule as validated: its values normalised (upper-case codes, numeric AS numbers, parsed CIDRs). */
export interface PolicyRule {
  readonly name: string;
  readonly action: RuleAction;
  readonly description: string | null;
  readonly cidr: readonly { text: string; block: Cidr }[] | null;
  readonly country: ReadonlySet<string> | null;
  readonly continent: ReadonlySet<string> | null;
  readonly asn: ReadonlySet<number> | null;
  readonly security: readonly string[] | null;
  /** `security` as TAG_BITS bits (0 without the condition). */
  readonly securityBits: number;
}

export interface Policy {
  readonly default: DefaultAction;
  /** Seconds a proxy may cache a decision (`Cache-Control: max-age`); 0: `no-store`. */
  readonly cacheSeconds: number;
  readonly rules: readonly PolicyRule[];
}

/**
 * A policy file that cannot be used; the message names the file, the rule and
 * the problem. A ConfigError: the command line exits with status 2.
 */
export class PolicyError extends ConfigError {
  override name = "PolicyError";
}

const TOP_FIELDS = ["default", "cacheSeconds", "rules", "description"] as const;
const RULE_FIELDS = ["name", "action", "description", ...CONDITIONS] as const;
/** Names go into a response header and a metrics label: keep them plain. */
const RULE_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
const MAX_CACHE_SECONDS = 86_400;
const CONTINENT_CODES = Object.keys(continents);

/**
 * Validates the parsed JSON of a policy file. Throws a PolicyError whose
 * message starts with `where` (the file) and names the rule (`rule 2
 * "no-tor"`) and the field at fault.
 */
export function parsePolicy(json: unknown, where: string): Policy {
  const fail = (message: string): never => {
    throw new PolicyError(`${where}: ${message}`);
  };
  if (!isObject(json)) return fail("expected a JSON object with default and rules");
  checkFields(json, TOP_FIELDS, "", fail);
  const defaultAction = json.default;
  if (defaultAction !== "allow" && defaultAction !== "deny") {
    fail(`"default" must be "allow" or "deny", not ${shown(defaultAction)}`);
  }
  const cacheSeconds = json.cacheSeconds ?? 0;
  if (
    !Number.isInteger(cacheSeconds) || (cacheSeconds as number) < 0 ||
    (cacheSeconds as number) > MAX_CACHE_SECONDS
  ) {
    fail(
      `"cacheSeconds" must be an integer from 0 to ${MAX_CACHE_SECONDS}, not ${
        shown(cacheSeconds)
      }`,
    );
  }
  if (json.description !== undefined && typeof json.description !== "string") {
    fail(`"description" must be a string`);
  }
  const list = json.rules ?? [];
  if (!Array.isArray(list)) return fail(`"rules" must be an array of rules`);
  const names = new Set<string>();
  const rules = list.map((raw, i) => {
    const rule = parseRule(raw, i, (message) => fail(message));
    if (names.has(rule.name)) {
      fail(`${ruleLabel(i, rule.name)}: the name is used by an earlier rule`);
    }
    names.add(rule.name);
    return rule;
  });
  return Object.freeze({
    default: defaultAction as DefaultAction,
    cacheSeconds: cacheSeconds as number,
    rules: Object.freeze(rules),
  });
}

function parseRule(raw: unknown, index: number, fail: (message: string) => never): PolicyRule {
  const rawName = isObject(raw) && typeof raw.name === "string" ? raw.name : null;
  const label = ruleLabel(index, rawName);
  const bad = (message: string): never => fail(`${label}: ${message}`);
  if (!isObject(raw)) return bad("expected an object with name, action and conditions");
  checkFields(raw, RULE_FIELDS, `${label}: `, fail);
  if (rawName === null) return bad(`"name" is required (a string)`);
  if (!RULE_NAME.test(rawName)) {
    bad(
      `"name" must be 1 to 64 letters, digits, ".", "_", ":" or "-", starting with a letter or digit`,
    );
  }
  if (rawName === "default") bad(`"default" is the name of the default action: choose another`);
  if (!(RULE_ACTIONS as readonly unknown[]).includes(raw.action)) {
    bad(`"action" must be "allow", "deny" or "report", not ${shown(raw.action)}`);
  }
  if (raw.description !== undefined && typeof raw.description !== "string") {
    bad(`"description" must be a string`);
  }
  const values = (field: ConditionName): unknown[] | null => {
    const value = raw[field];
    if (value === undefined) return null;
    if (!Array.isArray(value) || value.length === 0) {
      return bad(`"${field}" must be a non-empty array (its values are alternatives)`);
    }
    return value;
  };
  const each = <T>(field: ConditionName, read: (value: unknown) => T | null, expected: string) => {
    const list = values(field);
    return list?.map((value) => {
      const read_ = read(value);
      if (read_ === null) bad(`"${field}": ${shown(value)} is not ${expected}`);
      return read_ as T;
    }) ?? null;
  };
  const cidr = each("cidr", (value) => {
    if (typeof value !== "string") return null;
    try {
      return { text: value, block: parseCidr(value) };
    } catch {
      return null;
    }
  }, "a CIDR block or address (IPv4 or IPv6), such as 203.0.113.0/24 or 2001:db8::/32");
  const country = each(
    "country",
    (value) =>
      typeof value === "string" && countryFacts(value.toUpperCase()) ? value.toUpperCase() : null,
    "a known ISO 3166-1 alpha-2 country code, such as US or DE",
  );
  const continent = each(
    "continent",
    (value) =>
      typeof value === "string" && CONTINENT_CODES.includes(value.toUpperCase())
        ? value.toUpperCase()
        : null,
    `a continent code (${CONTINENT_CODES.join(", ")})`,
  );
  const asn = each("asn", readAsn, 'an AS number, such as 15169 or "AS15169"');
  const security = each(
    "security",
    (value) =>
      typeof value === "string" && SECURITY_TAGS.includes(value.toLowerCase())
        ? value.toLowerCase()
        : null,
    `a security tag (${SECURITY_TAGS.join(", ")})`,
  );
  if (!cidr && !country && !continent && !asn && !security) {
    bad(
      `no condition (${
        CONDITIONS.join(", ")
      }): it would match every address; use "default" for that`,
    );
  }
  return Object.freeze({
    name: rawName,
    action: raw.action as RuleAction,
    description: (raw.description as string | undefined) ?? null,
    cidr,
    country: country && new Set(country),
    continent: continent && new Set(continent),
    asn: asn && new Set(asn),
    security: security && [...new Set(security)],
    securityBits: (security ?? []).reduce((bits, tag) => bits | TAG_BITS.get(tag)!, 0),
  });
}

/** `15169`, `"15169"` or `"AS15169"` (any case) → 15169; null when not an AS number. */
function readAsn(value: unknown): number | null {
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value : "";
  const match = /^(?:AS)?(0|[1-9][0-9]{0,9})$/i.exec(text);
  const number = match ? Number(match[1]) : NaN;
  return number <= 0xffff_ffff ? number : null;
}

/** Fails on the first field not in `known`, suggesting the closest known one. */
function checkFields(
  object: Record<string, unknown>,
  known: readonly string[],
  prefix: string,
  fail: (message: string) => never,
): void {
  for (const field of Object.keys(object)) {
    if (known.includes(field)) continue;
    const near = closest(field, known);
    fail(
      `${prefix}unknown field ${JSON.stringify(field)}${
        near ? ` (did you mean "${near}"?)` : ""
      }; ` +
        `expected ${known.join(", ")}`,
    );
  }
}

/** `rule 2 "no-tor"` (1-based, as a person counts them in the file). */
function ruleLabel(index: number, name: string | null): string {
  return `rule ${index + 1}${name === null ? "" : ` ${JSON.stringify(name.slice(0, 64))}`}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value from the file, for a message (capped). */
function shown(value: unknown): string {
  const text = value === undefined ? "missing" : JSON.stringify(value);
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}
