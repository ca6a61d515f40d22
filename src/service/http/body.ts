/** Reading small request bodies with a size cap (the user-agent body, POST /bulk, /mcp). */

import {
  BadRequestError,
  PayloadTooLargeError,
  quoteInput,
  UnsupportedMediaTypeError,
} from "../../base/errors.ts";
import { concatBytes } from "../../base/bytes.ts";

/** A request body as the routes see it: headers plus the stream, wherever it came from. */
export interface BodySource {
  headers: Headers;
  stream: ReadableStream<Uint8Array> | null;
}

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** True when the request declares a JSON body (`application/json`, any parameters). */
export function declaresJsonBody(headers: Headers): boolean {
  const type = headers.get("content-type"); // first: most requests have none
  if (type === null || !JSON_TYPE.test(type)) return false;
  return Number(headers.get("content-length") ?? 0) > 0 || headers.has("transfer-encoding");
}

/** Refuses (415) a body that is not declared `application/json`: the POST routes read only JSON. */
export function requireJsonContentType(headers: Headers): void {
  const type = headers.get("content-type");
  if (type === null || !JSON_TYPE.test(type)) {
    throw new UnsupportedMediaTypeError(
      `Unsupported Content-Type ${
        type === null ? "(none)" : quoteInput(type)
      }: send the body as application/json`,
    );
  }
}

/**
 * Refuses (415) a body sent with a `Content-Encoding` (gzip...): bodies are
 * read as sent, and compressed bytes read as text would be answered, and
 * charged, as garbage.
 */
export function requireIdentityEncoding(headers: Headers): void {
  const encoding = headers.get("content-encoding");
  if (encoding === null || /^\s*identity\s*$/i.test(encoding)) return;
  throw new UnsupportedMediaTypeError(
    `Unsupported Content-Encoding ${quoteInput(encoding)}: send the body uncompressed`,
  );
}

/**
 * Reads and parses a JSON body of at most `limit` bytes. Stops reading as soon
 * as the limit is passed, so a huge body costs no more than the limit.
 */
export async function readJsonBody(source: BodySource, limit: number): Promise<unknown> {
  const text = new TextDecoder().decode(await readBoundedBody(source, limit));
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`Malformed JSON body: ${(error as Error).message}`);
  }
}

/**
 * The bytes of a body of at most `limit` bytes (413 past it, 415 compressed):
 * a declared length over the limit is refused unread, and the stream is
 * cancelled as soon as the limit is passed.
 */
export async function readBoundedBody(source: BodySource, limit: number): Promise<Uint8Array> {
  const tooLarge = () =>
    new PayloadTooLargeError(`Request body is larger than the limit of ${limit} bytes`);
  const { headers, stream } = source;
  requireIdentityEncoding(headers);
  if (Number(headers.get("content-length") ?? 0) > limit) {
    await stream?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (stream) {
    for await (const chunk of stream) {
      size += chunk.length;
      if (size > limit) throw tooLarge(); // leaving the loop cancels the stream
      chunks.push(chunk);
    }
  }
  return concatBytes(chunks, size);
}

/** True for a plain JSON object (not an array or null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
