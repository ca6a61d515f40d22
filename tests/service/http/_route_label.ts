/** The route label the app gives a request (what metrics and the access log show). */

import { routeLabelIndex, ROUTES } from "../../../src/service/ops/route.ts";
import { fixtureApp, peer } from "../../_helpers.ts";

const labels: string[] = [];
const app = await fixtureApp({
  config: { bulkMax: 10, corsOrigins: [] },
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
