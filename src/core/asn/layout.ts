/**
 * The ASN view's answer, defined once as a layout (as src/base/types.ts does for
 * the lookup result): key order is the output order; `get` names and the
 * OpenAPI schema come from it.
 */

import { createFieldCatalogue } from "../format/fields.ts";
import { createFieldSelector } from "../format/select.ts";
import type { LayoutGroup } from "../../base/types.ts";

const count = (description: string) => ({ leaf: "number", nullable: false, description }) as const;
const cidrs = (family: string) =>
  ({
    leaf: "array",
    nullable: false,
    description: `The AS's ${family} networks as collapsed CIDR blocks, in address order`,
  }) as const;

export const ASN_LAYOUT = {
  asn: { leaf: "integer", nullable: false, description: "The AS number" },
  name: {
    leaf: "string",
    nullable: true,
    description: "The organisation, as the ASN source names it",
  },
  country: {
    leaf: "string",
    nullable: true,
    description:
      "ISO 3166-1 alpha-2 country of the AS where its source gives one; the default source (ip-location-db) does not: null",
  },
  prefixes: { ipv4: cidrs("IPv4"), ipv6: cidrs("IPv6") },
  counts: {
    ipv4Prefixes: { leaf: "integer", nullable: false, description: "Blocks in prefixes.ipv4" },
    ipv6Prefixes: { leaf: "integer", nullable: false, description: "Blocks in prefixes.ipv6" },
    ipv4Addresses: count("IPv4 addresses the AS holds"),
    ipv6Slash64s: count(
      "IPv6 space the AS holds, in /64 networks (a block smaller than a /64 counts as the /64 it is in)",
    ),
  },
  lists: {
    leaf: "array",
    nullable: false,
    description:
      "Each installed security or crawler list naming part of the AS (none: empty), by kind then name, with how much of the AS it names",
    items: {
      source: {
        leaf: "string",
        nullable: false,
        description: "The list's name in the sources file",
      },
      kind: {
        leaf: "string",
        nullable: false,
        enum: ["tor", "vpn", "hosting", "threat", "relay", "allow", "crawler"],
      },
      ipv4Addresses: count("The AS's IPv4 addresses the list names"),
      ipv6Slash64s: count("The AS's IPv6 space the list names, in /64 networks"),
    },
  },
} as const satisfies LayoutGroup;

/** `get` for the ASN view: `asn` is always kept. */
export const parseAsnSelection = createFieldSelector(
  createFieldCatalogue(ASN_LAYOUT),
  "prefixes.ipv4 or counts.ipv4Addresses",
);
