/**
 * Every compatible API's routes, each declared once (vendor_route.ts), in the
 * order of `/openapi.json`; the app (src/service/app/app.ts) serves them as it
 * serves every route.
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
