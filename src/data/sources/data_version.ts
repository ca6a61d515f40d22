/**
 * Which data answered: a short id of a data set, the same in every isolate
 * that opens it and across restarts, and different whenever what it answers
 * from differs (a file, a list's content, a provider or minimum count, an
 * operator's database). A manifest rewritten only to record a failed update
 * keeps its id.
 */

import { createHash } from "node:crypto";
import type { Manifest } from "./manifest.ts";

export interface DataVersion {
  /** 12 hex digits. */
  id: string;
  /** ISO 8601 time of the newest install among the set's sources; null if none is recorded. */
  installedAt: string | null;
}

/** An operator's database as the id counts it (its bytes are not hashed again at each open). */
export interface OperatorFingerprint {
  variable: string;
  path: string;
  size: number;
  databaseType: string;
  buildEpoch: string;
  nodeCount: number;
}

/** The version of the set a manifest (and the operator's databases) make. */
export function dataVersion(
  manifest: Manifest,
  operator: readonly OperatorFingerprint[] = [],
): DataVersion {
  const hash = createHash("sha256");
  for (const e of manifest.sources) {
    hash.update(
      JSON.stringify([
        e.name ?? null,
        e.kind,
        e.file,
        e.sha256,
        e.download?.sha256 ?? null,
        e.provider ?? null,
        e.minCount ?? null,
      ]) + "\n",
    );
  }
  for (const o of operator) hash.update(JSON.stringify(o) + "\n");
  const installed = manifest.sources.map((e) => e.built).filter((t) => !Number.isNaN(Date.parse(t)))
    .sort();
  return {
    id: hash.digest("hex").slice(0, 12),
    installedAt: installed.at(-1) ?? null,
  };
}
