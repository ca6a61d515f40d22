/** A bulk list's items as people type them: commas, and the spaces around each item. */

/**
 * The items of `/bulk/{list}`: split on commas, spaces and tabs around each
 * item ignored, and one trailing comma allowed (`a,b,` is two items). Other
 * characters, line breaks included, stay and make that item invalid.
 *
 * @example splitBulkList("8.8.8.8, 1.1.1.1,") // ["8.8.8.8", "1.1.1.1"]
 */
export function splitBulkList(list: string): string[] {
  const items = list.split(",").map(trimBulkItem);
  if (items.length > 0 && items[items.length - 1] === "") items.pop();
  return items;
}

/** A bulk item without the spaces and tabs around it (what people type after a comma). */
export function trimBulkItem(item: string): string {
  return item.replace(/^[ \t]+|[ \t]+$/g, "");
}
