/** The streamed bulk body parsers (src/service/bulk/input.ts, src/service/bulk/json_ips.ts), fed in pieces. */

import assert from "node:assert/strict";
import {
  type BulkInput,
  type InputFormat,
  inputParser,
  ITEM_CAP,
  readInput,
} from "../../../src/service/bulk/input.ts";
import { seededRandom } from "../../_random.ts";

/** Parses `body` fed in pieces of the given sizes (cycled); returns items and the user agent. */
function parse(format: InputFormat, body: string, sizes: number[] = [body.length || 1]) {
  const parser = inputParser(format);
  const out: BulkInput[] = [];
  let at = 0;
  for (let k = 0; at < body.length; k++) {
    const size = sizes[k % sizes.length]!;
    parser.push(body.slice(at, at + size), out);
    at += size;
  }
  parser.end(out);
  return { items: out, userAgent: parser.userAgent };
}

const BODIES = [
  '{"ips":["8.8.8.8","1.1.1.1"]}',
  ' \n{ "userAgent" : "Mozilla/5.0 \\"quoted\\" \\u00e9\\ud83d\\ude00", "ips" : [ " 8.8.8.8\\t" , "" , "a\\\\b\\/c\\n" ] , "x": {"y": [1, -2.5e3, true, null, {"z": "\\""}]} }\n',
  '{"other":[[[]]],"ips":[],"more":"x"}',
  '{"ips":["\\u0031.1.1.1"],"userAgent":null}'.replace(',"userAgent":null', ""),
];

Deno.test("the JSON body parser gives JSON.parse's items, whatever the pieces it is fed in", () => {
  const random = seededRandom(7);
  for (const body of BODIES) {
    const parsed = JSON.parse(body);
    const expected = (parsed.ips as string[]).map((ip) => ip.replace(/^[ \t]+|[ \t]+$/g, ""));
    const cuts = [
      [body.length],
      [1],
      [2],
      [3],
      [7],
      Array.from({ length: 20 }, () => 1 + Math.floor(random() * 9)),
    ];
    for (const sizes of cuts) {
      const { items, userAgent } = parse("json", body, sizes);
      assert.deepEqual(items, expected, `${body} in pieces of ${sizes}`);
      assert.equal(userAgent, parsed.userAgent ?? null);
    }
  }
});

Deno.test("the JSON body parser refuses what JSON.parse refuses, and bodies that are not {ips: [...]}", () => {
  const cases: [string, RegExp][] = [
    ["{not json", /Malformed JSON body: unexpected "n" at character 2/],
    ['{"ips":["8.8.8.8" "x"]}', /Malformed JSON body: unexpected "\\"" at character 19/],
    ['{"ips":["8.8.8.8",]}', /Malformed JSON body/],
    ['{"ips":["8.8.8.8"]', /unexpected end of the body/],
    ['{"ips":["8.8.8.8"]} x', /after the end/],
    ['{"ips":["a\u0001"]}', /control character/],
    ['{"ips":["\\x"]}', /bad escape/],
    ['{"ips":[1]', /"ips" must hold only strings, item 1 is a number/],
    ['{"ips":"8.8.8.8"}', /"ips" must be an array, got string/],
    ['["8.8.8.8"]', /expected \{"ips": \["<ip>", \.\.\.\]\}/],
    ['{"ip":["8.8.8.8"]}', /expected \{"ips"/],
    ['{"ips":["1"],"ips":["2"]}', /"ips" appears twice/],
    ['{"ips":["1"],"userAgent":"x"}', /"userAgent" must come before "ips"/],
    ['{"userAgent":5,"ips":[]}', /"userAgent" must be a string, got number/],
    ['{"ips":[tru]}', /Malformed JSON body|must hold only strings/],
    ["", /unexpected end of the body/],
  ];
  for (const [body, message] of cases) {
    assert.throws(() => parse("json", body, [3]), message, body);
    let parsedByJson = true;
    try {
      JSON.parse(body);
    } catch {
      parsedByJson = false;
    }
    if (/Malformed/.test(message.source)) assert.equal(parsedByJson, false, body);
  }
});

Deno.test("the JSON body's userAgent may follow ips when it arrives before any address is handed out", () => {
  const body = '{"ips":["8.8.8.8","1.1.1.1"],"userAgent":"x"}';
  const whole = parse("json", body, [body.length]);
  assert.deepEqual(whole.items, ["8.8.8.8", "1.1.1.1"]);
  assert.equal(whole.userAgent, "x");
  // Split after the first address: it may already be answered, so the late user agent is refused.
  assert.throws(() => parse("json", body, [18, body.length]), /must come before "ips"/);
});

Deno.test("an item longer than the cap is cut and marked, so it stays invalid, in every body format", () => {
  const long = "1".repeat(ITEM_CAP * 3);
  const json = parse("json", JSON.stringify({ ips: [`   ${long}`, "8.8.8.8"] }), [100]).items;
  assert.deepEqual(json, [`${"1".repeat(ITEM_CAP)}…`, "8.8.8.8"]);
  const text = parse("text", `${long}\n8.8.8.8\n`, [100]).items;
  assert.deepEqual(text, [`${"1".repeat(ITEM_CAP)}…`, "8.8.8.8"]);
  const [failed, ok] = parse("ndjson", `"${long}"\n"8.8.8.8"\n`, [100]).items;
  assert.equal(typeof failed, "object");
  assert.match((failed as { error: { message: string } }).error.message, /line 1: longer than/);
  assert.equal(ok, "8.8.8.8");
});

Deno.test("plain text: one address a line, CRLF or LF, blank lines skipped, spaces trimmed", () => {
  const body = "8.8.8.8\r\n\r\n  1.1.1.1 \n\t\nbad line\n2001:db8::1";
  for (const sizes of [[body.length], [1], [4]]) {
    assert.deepEqual(parse("text", body, sizes).items, [
      "8.8.8.8",
      "1.1.1.1",
      "bad line",
      "2001:db8::1",
    ]);
  }
});

Deno.test("NDJSON: strings or {ip} objects; any other line fails in place, naming its line", () => {
  const body = '"8.8.8.8"\n{"ip": "1.1.1.1", "note": 1}\n\n8.8.8.8\n[1]\n';
  const items = parse("ndjson", body, [5]).items;
  assert.equal(items[0], "8.8.8.8");
  assert.equal(items[1], "1.1.1.1");
  assert.deepEqual(items[2], {
    ip: "8.8.8.8",
    error: {
      status: 400,
      message: (items[2] as { error: { message: string } }).error.message,
    },
  });
  assert.match(
    (items[2] as { error: { message: string } }).error.message,
    /^Invalid NDJSON line 4: /,
  );
  assert.match(
    (items[3] as { error: { message: string } }).error.message,
    /^Invalid NDJSON line 5: expected an address/,
  );
  assert.equal(items.length, 4);
});

Deno.test("readInput without read-ahead reads one chunk ahead at most, and cancels the body when stopped early", async () => {
  let pulls = 0;
  let cancelled = false;
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      controller.enqueue(encoder.encode("8.8.8.8\n".repeat(10)));
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  const batches = readInput(body, inputParser("text"), { memoryBytes: 0, spillBytes: 0 });
  const first = await batches.next();
  assert.equal((first.value as BulkInput[]).length, 10);
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
  assert.ok(pulls <= 3, `pulled ${pulls} chunks for one batch`);
  await batches.return(undefined);
  assert.equal(cancelled, true);
});

/** A random JSON value of bounded depth (strings with escapes and characters outside ASCII). */
function randomValue(random: () => number, depth: number): unknown {
  const pick = Math.floor(random() * (depth > 2 ? 4 : 6));
  if (pick === 0) return randomText(random);
  if (pick === 1) return Math.round((random() - 0.5) * 1e6) / 100;
  if (pick === 2) return [true, false, null][Math.floor(random() * 3)];
  if (pick === 3) return Math.floor(random() * 100);
  if (pick === 4) {
    return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
  }
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(random() * 4); i > 0; i--) {
    out[randomText(random)] = randomValue(random, depth + 1);
  }
  return out;
}

function randomText(random: () => number): string {
  const alphabet = [
    "8",
    ".",
    ":",
    "a",
    " ",
    "\t",
    '"',
    "\\",
    "/",
    "\n",
    "é",
    "😀",
    "\u2028",
    "\u0001",
  ];
  let text = "";
  for (let i = Math.floor(random() * 12); i > 0; i--) {
    text += alphabet[Math.floor(random() * alphabet.length)];
  }
  return text;
}

Deno.test("the JSON body parser agrees with JSON.parse on random bodies, whole and corrupted", () => {
  const random = seededRandom(22);
  let accepted = 0;
  for (let n = 0; n < 400; n++) {
    const ips = Array.from({ length: Math.floor(random() * 6) }, () => randomText(random));
    const body: Record<string, unknown> = {};
    if (random() < 0.5) body.userAgent = randomText(random);
    body[randomText(random)] = randomValue(random, 0);
    body.ips = ips;
    body[`x${randomText(random)}`] = randomValue(random, 0);
    let text = JSON.stringify(body, null, random() < 0.5 ? 1 : undefined);
    if (n % 2 === 1) {
      // Corrupt one character: the parser must refuse exactly what JSON.parse refuses.
      const at = Math.floor(random() * text.length);
      text = text.slice(0, at) + '{}[],:"\\x1 '[Math.floor(random() * 11)] + text.slice(at + 1);
    }
    let parsed: { ips?: unknown } | undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const sizes = [1 + Math.floor(random() * 20)];
    if (parsed === undefined) {
      // Refused; a shape error may come first (a number where an address must be).
      assert.throws(() => parse("json", text, sizes), /(Malformed|Invalid) JSON body/, text);
      continue;
    }
    const keys = Object.keys(parsed as object);
    const shaped = Array.isArray(parsed.ips) && parsed.ips.every((ip) => typeof ip === "string") &&
      (!keys.includes("userAgent") || text.indexOf('"userAgent"') < text.indexOf('"ips"'));
    if (!shaped) continue; // a corrupted key or value: the shape checks decide, not JSON
    const trim = (ip: string) => ip.replace(/^[ \t]+|[ \t]+$/g, "");
    assert.deepEqual(parse("json", text, sizes).items, (parsed.ips as string[]).map(trim), text);
    accepted++;
  }
  assert.ok(accepted > 150, `${accepted} bodies accepted`);
});

Deno.test("a line longer than the cap is its item as soon as it passes the cap, before its line ends", () => {
  for (const format of ["text", "ndjson"] as const) {
    const parser = inputParser(format);
    const out: BulkInput[] = [];
    parser.push("9".repeat(ITEM_CAP + 2), out);
    assert.equal(out.length, 1, `${format}: the item is out before the line break`);
    parser.push("9".repeat(100_000), out); // the rest of that line is skipped
    parser.push('9\n"8.8.8.8"\n', out);
    parser.end(out);
    assert.equal(out.length, 2, format);
    if (format === "text") assert.deepEqual(out, [`${"9".repeat(ITEM_CAP)}…`, '"8.8.8.8"']);
    else {
      assert.match((out[0] as { error: { message: string } }).error.message, /line 1: longer/);
      assert.equal(out[1], "8.8.8.8");
    }
  }
});

Deno.test("blank lines count as lines: NDJSON's line numbers stay right after runs of LF and CRLF", () => {
  const { items } = parse("ndjson", '\n\r\n\n"8.8.8.8"\r\n\r\n\n[1]\n', [3]);
  assert.equal(items[0], "8.8.8.8");
  assert.match((items[1] as { error: { message: string } }).error.message, /line 7:/);
});

/** A body of `chunk` repeated `times`, counting the bytes pulled from it. */
function countedBody(chunk: string, times: number, head = "") {
  const state = { pulled: 0 };
  const bytes = new TextEncoder().encode(chunk);
  let left = times;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (head) controller.enqueue(new TextEncoder().encode(head));
    },
    pull(controller) {
      if (left-- === 0) return controller.close();
      state.pulled += bytes.length;
      controller.enqueue(bytes);
    },
  }, { highWaterMark: 0 });
  return { stream, state };
}

Deno.test("readInput with maxGapBytes refuses a body that gives no item for that many bytes, after the items before it", async () => {
  const { stream } = countedBody("\n \n".repeat(1000), 100, "8.8.8.8\n1.1.1.1\n");
  const batches = readInput(stream, inputParser("text"), { maxGapBytes: 16 * 1024 });
  assert.deepEqual((await batches.next()).value, ["8.8.8.8", "1.1.1.1"]);
  await assert.rejects(
    batches.next(),
    /^AppError: No address in 18000 bytes of the request body \(up to byte 18016\): send addresses/,
  );
});
