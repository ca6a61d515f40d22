/**
 * Spamhaus DROP in its JSON-lines form (`drop_v4.json`, `drop_v6.json`): one
 * `{"cidr":…,"sblid":…,"rir":…}` object a line, then one metadata line
 * `{"type":"metadata","timestamp":…,"records":N,…}`. The metadata line is
 * required and its record count must match: a file cut short is refused, not
 * installed as a smaller list. Its `timestamp` is the list's date.
 */

import { checkNetwork, isObject, type ParsedFeed, show } from "./feed_common.ts";

export function parseDropJson(text: string, label: string, feed: ParsedFeed): void {
  const lines = text.split("\n");
  let metadata: Record<string, unknown> | null = null;
  let records = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    const at = `${label} line ${i + 1}`;
    if (metadata) throw new Error(`${at}: a line after the metadata line`);
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      throw new Error(`${at}: invalid JSON: ${(error as Error).message}`);
    }
    if (!isObject(json)) throw new Error(`${at}: expected a JSON object`);
    if (json.type === "metadata") {
      metadata = json;
      continue;
    }
    if (typeof json.cidr !== "string") throw new Error(`${at}: no "cidr" in ${show(line)}`);
    if (typeof json.sblid !== "string" || !/^SBL\d+$/.test(json.sblid)) {
      throw new Error(`${at}: "sblid" ${show(json.sblid)} is not an SBL id`);
    }
    try {
      checkNetwork(json.cidr);
    } catch (error) {
      throw new Error(`${at}: ${(error as Error).message}`);
    }
    feed.networks.push(json.cidr);
    records++;
  }
  if (!metadata) throw new Error(`${label}: no metadata line (the file is incomplete)`);
  if (metadata.records !== records) {
    throw new Error(
      `${label}: the metadata line counts ${
        show(metadata.records)
      } records, the file has ${records}`,
    );
  }
  const timestamp = metadata.timestamp;
  if (typeof timestamp === "number" && Number.isFinite(timestamp)) {
    feed.dataDate = new Date(timestamp * 1000);
  }
}
