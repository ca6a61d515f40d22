/**
 * Which data answers: the data set is pinned when a request arrives (a reload
 * meanwhile does not change it, even for a long stream), and its version is
 * named in `X-Data-Version` on every answer made while data is loaded,
 * errors included.
 */

import type { ServedSlot } from "../env.ts";
import type { AnswerRule } from "./rules.ts";

export function pinDataSet(slot: ServedSlot): AnswerRule {
  return {
    before(c) {
      c.set("served", slot.current);
      return null;
    },
    after(c) {
      const served = c.get("served");
      if (served) c.res.headers.set("x-data-version", served.data.version.id);
    },
  };
}
