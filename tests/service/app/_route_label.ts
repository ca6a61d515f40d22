/** The route label the app gives a request (what metrics and the access log show). */

import { ROUTE_LABELS } from "../../../src/service/app/app.ts";
import { fixtureApp, peer } from "../../_helpers.ts";

const labels: string[] = [];
const app = await fixtureApp({
  config: { bulkMax: 10, corsOrigins: [] },
  instrumentation: {
    rule: {
      after: (c) => void labels.push(ROUTE_LABELS[c.get("route") ?? ROUTE_LABELS.length - 1]!),
    },
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
