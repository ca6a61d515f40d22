/**
 * Every compatible API's routes, in the order they are tried: the app
 * (src/service/http/app.ts) registers each on Hono under its family's entry of the
 * route table (src/service/http/routes.ts).
 */

import { IPAPI_ROUTES } from "./ipapi.ts";
import { IPINFO_ROUTES } from "./ipinfo.ts";
import { MAXMIND_ROUTES } from "./maxmind.ts";
import type { Route } from "../http/route.ts";

export const COMPAT_ROUTES: readonly Route[] = [
  ...MAXMIND_ROUTES,
  ...IPINFO_ROUTES,
  ...IPAPI_ROUTES,
];
