/** The route label the app gives a request (what metrics and the access log show). */

import { createApp } from "../../../src/service/http/app.ts";
import { routeLabelIndex, ROUTES } from "../../../src/service/ops/route.ts";
import { fixtureDataSet, fixtureLookup, peer } from "../../_helpers.ts";

const labels: string[] = [];
const app = createApp({
  services: { current: { data: await fixtureDataSet(), lookup: await fixtureLookup() } },
  config: { bulkMax: 10, trustedProxies: [], forwardedHeader: "x-forwarded-for", corsOrigins: [] },
  logError: () => {},
  instrumentation: {
    rule: { after: (c) => void labels.push(ROUTES[routeLabelIndex(c)]!) },
  },
});

/** The label of `method path` once the app has answered it. */
export async function routeLabel(path: string, method = "GET"): Promise<string> {
  const response = await app.fetch(
    new Request(`http://localhost${path}`, { method }),
    peer("81.2.69.142"),
  );
  await response.body?.cancel();
  return labels.pop()!;
}
