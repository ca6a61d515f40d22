/** The one mapping from error codes to HTTP statuses. */

import type { ErrorCode } from "../errors.ts";

export const STATUS_BY_CODE: Readonly<Record<ErrorCode, 400 | 401 | 404 | 413 | 429 | 503>> = {
  bad_request: 400,
  unauthorized: 401,
  invalid_ip: 404,
  not_found: 404,
  payload_too_large: 413,
  rate_limited: 429,
  data_unavailable: 503,
};
