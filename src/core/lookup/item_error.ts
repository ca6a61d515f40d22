/**
 * A failed item (src/core/lookup/item.ts): the address as given, the API's
 * status and message, and, hidden, the code of its error: its kind is read by
 * code (`itemErrorCode`), never from its message text.
 */

import { type AppError, capInput, type ErrorCode, STATUS_BY_CODE } from "../../base/errors.ts";
import type { FailedItem, LookupResult } from "../../base/types.ts";

/** The codes of the errors an item fails with in place: the address is invalid, or unknown. */
export type ItemErrorCode = Extract<ErrorCode, "invalid_ip" | "not_found">;

/** Whether `item` failed (it has an `error` in place of the answer). */
export function isFailedItem(item: LookupResult | FailedItem): item is FailedItem {
  return "error" in item;
}

/** The code of a failed item's error, where the lookup made it (null: another failure, a 500). */
export function itemErrorCode(item: FailedItem): ItemErrorCode | null {
  return (item as { [CODE]?: ItemErrorCode })[CODE] ?? null;
}

/** A failed item of `code`: the input as given, capped (an item never grows with the request). */
export function failedItem(input: string, code: ItemErrorCode, message: string): FailedItem {
  const item: FailedItem = {
    ip: capInput(input),
    error: { status: STATUS_BY_CODE[code], message },
  };
  // Hidden (a symbol, not enumerable): no serialiser writes it, no comparison sees it.
  Object.defineProperty(item, CODE, { value: code });
  return item;
}

/** The failed item of `error` when it is an item's own failure (invalid or unknown address), else null. */
export function failedItemOf(input: string, error: AppError): FailedItem | null {
  return error.code === "invalid_ip" || error.code === "not_found"
    ? failedItem(input, error.code, error.message)
    : null;
}

const CODE: unique symbol = Symbol("the code of a failed item's error");
