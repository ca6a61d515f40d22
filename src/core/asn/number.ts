/** AS numbers as a client writes them, and the ranges no public network uses. */

import { AppError, BadRequestError, quoteInput } from "../../base/errors.ts";

/** The largest AS number (32 bits, RFC 6793). */
export const MAX_ASN = 4294967295;

/**
 * Reads an AS number: decimal, optionally after `AS` (any case): `15169`,
 * `AS15169`, `as15169`. Anything else is a BadRequestError naming the input.
 *
 * @example parseAsNumber("AS15169") // 15169
 */
export function parseAsNumber(raw: string): number {
  if (raw === "") throw new BadRequestError("Missing AS number: use /asn/{n}, e.g. /asn/15169");
  const match = /^(?:as)?(0|[1-9][0-9]{0,9})$/i.exec(raw);
  if (!match) {
    throw new BadRequestError(
      `Invalid AS number ${quoteInput(raw)}: expected a number such as 15169 or AS15169`,
    );
  }
  const asn = Number(match[1]);
  if (asn > MAX_ASN) {
    throw new BadRequestError(
      `Invalid AS number ${quoteInput(raw)}: AS numbers go from 0 to ${MAX_ASN}`,
    );
  }
  return asn;
}

/** The special-purpose AS ranges (IANA registry), most specific first. */
const RESERVED: readonly { first: number; last: number; name: string }[] = [
  { first: 0, last: 0, name: "a reserved AS number (RFC 7607)" },
  { first: 23456, last: 23456, name: "AS_TRANS, the stand-in for 4-byte AS numbers (RFC 6793)" },
  { first: 64496, last: 64511, name: "a documentation AS number (RFC 5398)" },
  { first: 64512, last: 65534, name: "a private-use AS number (RFC 6996)" },
  { first: 65535, last: 65535, name: "a reserved AS number (RFC 7300)" },
  { first: 65536, last: 65551, name: "a documentation AS number (RFC 5398)" },
  { first: 65552, last: 131071, name: "a reserved AS number (IANA)" },
  { first: 4200000000, last: 4294967294, name: "a private-use AS number (RFC 6996)" },
  { first: 4294967295, last: 4294967295, name: "a reserved AS number (RFC 7300)" },
];

/** What a special-purpose AS number is (`a private-use AS number (RFC 6996)`), else null. */
export function reservedAsName(asn: number): string | null {
  return RESERVED.find((r) => asn >= r.first && asn <= r.last)?.name ?? null;
}

/** The 404 of an AS number the data does not hold (or no public network uses). */
export function asnNotFound(asn: number): AppError {
  const reserved = reservedAsName(asn);
  return new AppError(
    "not_found",
    reserved ? `No data for AS${asn}: it is ${reserved}` : `No data for AS${asn}`,
  );
}
