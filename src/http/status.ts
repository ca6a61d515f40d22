/** The one mapping from error codes to HTTP statuses. */

import type { ErrorCode } from "../errors.ts";

export const STATUS_BY_CODE: Readonly<
  Record<ErrorCode, 400 | 401 | 404 | 405 | 413 | 415 | 429 | 503>
> = {
  bad_request: 400,
  unauthorized: 401,
  invalid_ip: 404,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  data_unavailable: 503,
};
