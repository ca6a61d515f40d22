/**
 * Every compatible API's routes; the app registers them in one place (their
 * metric and log labels are in labels.ts).
 */

import { IPAPI_ROUTES } from "./ipapi.ts";
import { IPINFO_ROUTES } from "./ipinfo.ts";
import { MAXMIND_ROUTES } from "./maxmind.ts";
import type { CompatRoute } from "./pipeline.ts";

export const COMPAT_ROUTES: readonly CompatRoute[] = [
  ...MAXMIND_ROUTES,
  ...IPINFO_ROUTES,
  ...IPAPI_ROUTES,
];
