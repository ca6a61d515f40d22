/** Where the server keeps the data set it serves: swapped whole on a reload. */

import type { Lookup } from "../../core/lookup/lookup.ts";
import type { DataSet } from "../../data/sources/data_set.ts";

/** The loaded data and lookup; `current` is null while the data is still loading. */
export interface ServiceSlot {
  current: { lookup: Lookup; data: DataSet } | null;
}
