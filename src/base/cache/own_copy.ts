/**
 * A string of `text`'s characters that shares no memory with it, for a cache to keep.
 *
 * V8 makes `slice` (from 13 characters) a view into the string cut from, and `+` a rope of its
 * parts: a cache key cut from a 30 KB user agent, or built from a URL's parameters, keeps the
 * whole of that text alive for as long as the entry lives. Here, concatenating makes a rope,
 * slicing a rope flattens it into a new string first, and the slice points into that new string
 * only. O(length): for what a cache keeps, not for every request.
 */
export function ownCopy(text: string): string {
  return (text + " ").slice(0, -1);
}
