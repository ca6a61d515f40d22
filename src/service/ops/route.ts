/**
 * The route label of a request (`/ip/{ip}`, never `/ip/8.8.8.8`) for metrics
 * and access logs, from the one route table (src/service/http/routes.ts).
 */

export { ROUTE_LABELS as ROUTES } from "../http/routes.ts";
export { routeLabelIndex } from "../http/route_label.ts";
