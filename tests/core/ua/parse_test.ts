import assert from "node:assert/strict";
import { UAParser } from "ua-parser-js";
import {
  capLength,
  createUserAgentParser,
  EMPTY_USER_AGENT,
  UA_MAX_LENGTH,
} from "../../../src/core/ua/parse.ts";
import type { UserAgent } from "../../../src/base/types.ts";

/** Builds the expected object; omitted parts are null (architecture "Unknown"). */
function ua(parts: {
  browser?: [string, string];
  engine?: [string, string];
  os?: [string, string | null];
  device?: [string | null, string | null, string | null];
  cpu?: string;
}): UserAgent {
  return {
    browser: { name: parts.browser?.[0] ?? null, version: parts.browser?.[1] ?? null },
    engine: { name: parts.engine?.[0] ?? null, version: parts.engine?.[1] ?? null },
    os: { name: parts.os?.[0] ?? null, version: parts.os?.[1] ?? null },
    device: {
      type: parts.device?.[0] ?? null,
      vendor: parts.device?.[1] ?? null,
      model: parts.device?.[2] ?? null,
    },
    cpu: { architecture: parts.cpu ?? "Unknown" },
  };
}

const ALL_NULL = ua({});

const CASES: { name: string; input: string | null | undefined; expected: UserAgent }[] = [
  {
    name: "Chrome on Windows is a desktop",
    input:
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    expected: ua({
      browser: ["Chrome", "124.0.0.0"],
      engine: ["Blink", "124.0.0.0"],
      os: ["Windows", "10"],
      device: ["desktop", null, null],
      cpu: "amd64",
    }),
  },
  {
    name: "Edge on Windows is a desktop",
    input:
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.80",
    expected: ua({
      browser: ["Edge", "124.0.2478.80"],
      engine: ["Blink", "124.0.0.0"],
      os: ["Windows", "10"],
      device: ["desktop", null, null],
      cpu: "amd64",
    }),
  },
  {
    name: "Safari on macOS is a desktop with unknown architecture",
    input:
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15",
    expected: ua({
      browser: ["Safari", "17.4.1"],
      engine: ["WebKit", "605.1.15"],
      os: ["Mac OS", "10.15.7"],
      device: ["desktop", "Apple", "Macintosh"],
    }),
  },
  {
    name: "Firefox on Linux is a desktop with a null OS version",
    input: "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
    expected: ua({
      browser: ["Firefox", "125.0"],
      engine: ["Gecko", "125.0"],
      os: ["Linux", null],
      device: ["desktop", null, null],
      cpu: "amd64",
    }),
  },
  {
    name: "Firefox on Ubuntu is a desktop",
    input: "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
    expected: ua({
      browser: ["Firefox", "125.0"],
      engine: ["Gecko", "125.0"],
      os: ["Ubuntu", null],
      device: ["desktop", null, null],
      cpu: "amd64",
    }),
  },
  {
    name: "Chrome on Chrome OS is a desktop",
    input:
      "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    expected: ua({
      browser: ["Chrome", "124.0.0.0"],
      engine: ["Blink", "124.0.0.0"],
      os: ["Chromium OS", "14541.0.0"],
      device: ["desktop", null, null],
      cpu: "amd64",
    }),
  },
  {
    name: "Firefox on FreeBSD is a desktop",
    input: "Mozilla/5.0 (X11; FreeBSD amd64; rv:109.0) Gecko/20100101 Firefox/115.0",
    expected: ua({
      browser: ["Firefox", "115.0"],
      engine: ["Gecko", "109.0"],
      os: ["FreeBSD", null],
      device: ["desktop", null, null],
      cpu: "amd64",
    }),
  },
  {
    name: "Safari on iPhone is mobile",
    input:
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1",
    expected: ua({
      browser: ["Mobile Safari", "17.4.1"],
      engine: ["WebKit", "605.1.15"],
      os: ["iOS", "17.4.1"],
      device: ["mobile", "Apple", "iPhone"],
    }),
  },
  {
    name: "Chrome on an Android phone is mobile",
    input:
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36",
    expected: ua({
      browser: ["Chrome", "124.0.6367.82"],
      engine: ["Blink", "124.0.6367.82"],
      os: ["Android", "14"],
      device: ["mobile", "Google", "Pixel 8"],
    }),
  },
  {
    name: "Safari on iPad is a tablet",
    input:
      "Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
    expected: ua({
      browser: ["Mobile Safari", "17.4"],
      engine: ["WebKit", "605.1.15"],
      os: ["iOS", "17.4"],
      device: ["tablet", "Apple", "iPad"],
    }),
  },
  {
    name: "a Samsung Android tablet is a tablet",
    input:
      "Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    expected: ua({
      browser: ["Chrome", "124.0.0.0"],
      engine: ["Blink", "124.0.0.0"],
      os: ["Android", "13"],
      device: ["tablet", "Samsung", "SM-X710"],
    }),
  },
  {
    name: "an Xbox keeps the parser's console type despite Windows NT in the string",
    input:
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64; Xbox; Xbox One) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.102 Safari/537.36 Edge/18.19041",
    expected: ua({
      browser: ["Edge", "18.19041"],
      engine: ["EdgeHTML", "18.19041"],
      os: ["Xbox", "One"],
      device: ["console", "Microsoft", "Xbox One"],
      cpu: "amd64",
    }),
  },
  {
    name: "a Tizen smart TV is not a desktop",
    input:
      "Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36",
    expected: ua({
      browser: ["Samsung Internet", "4.0"],
      engine: ["Blink", "76.0.3809.146"],
      os: ["Tizen", "6.0"],
      device: ["smarttv", "Samsung", null],
    }),
  },
  {
    name: "Googlebot (no OS) has a null device type",
    input: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    expected: ALL_NULL,
  },
  { name: "curl is all null", input: "curl/8.5.0", expected: ALL_NULL },
  { name: "python-requests is all null", input: "python-requests/2.31.0", expected: ALL_NULL },
  { name: "an empty string is all null", input: "", expected: ALL_NULL },
  { name: "whitespace only is all null", input: " \t ", expected: ALL_NULL },
  { name: "null is all null", input: null, expected: ALL_NULL },
  { name: "undefined is all null", input: undefined, expected: ALL_NULL },
  {
    name: "markup and control characters are kept as text, controls become spaces",
    input:
      'Mozilla/5.0 (Linux; Android 9; <b>&"Mo\u0001del"</b> Build/X) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/1.0 Mobile Safari/537.36',
    expected: ua({
      browser: ["Chrome", "1.0"],
      engine: ["Blink", "1.0"],
      os: ["Android", "9"],
      device: ["mobile", null, '<b>&"Mo del"</b>'],
    }),
  },
];

for (const { name, input, expected } of CASES) {
  Deno.test(`user agent: ${name}`, () => {
    const parse = createUserAgentParser();
    assert.deepEqual(parse(input), expected);
  });
}

Deno.test("user agent: results contain no control characters", () => {
  const parse = createUserAgentParser();
  const hostile =
    '<script>alert("x&y")</script>\u0000 Mozilla/5.0 (Windows NT 10.0\u0000; Win64; x64)\u0007 (Linux; Android 9; <b>\u001b[31m&"Model\u0085</b> Build/X) Chrome/1.0 Mobile Safari/537.36';
  const json = JSON.stringify(parse(hostile));
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(json, /[\u0000-\u001f\u007f-\u009f]|\\u00[01][0-9a-f]/i);
  assert.equal(parse(hostile).os.name, "Windows");
});

Deno.test("user agent: a hostile 100 KB string is read as its first UA_MAX_LENGTH characters", () => {
  // No cache: each answer is computed, not a cached object compared with itself.
  const parse = createUserAgentParser({ cacheSize: 0 });
  const head =
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 ";
  for (const p of ["Android ", "; ", "(a", "Build/", "mobile ", "x"]) {
    const huge = head + p.repeat(Math.ceil(100_000 / p.length));
    assert.ok(huge.length >= 100_000);
    const result = parse(huge);
    // The independent reading: ua-parser-js itself on the first UA_MAX_LENGTH characters.
    const raw = new UAParser(huge.slice(0, UA_MAX_LENGTH)).getResult();
    assert.equal(result.browser.name, "Chrome", p);
    assert.equal(result.browser.version, raw.browser.version, p);
    assert.equal(result.os.name, "Android", p);
    assert.equal(result.os.version, "14", p);
    assert.equal(result.device.type, "mobile", p);
    assert.equal(result.device.model, raw.device.model ?? null, p);
  }
  // A pathological string without a known head as well.
  assert.deepEqual(parse("(".repeat(100_000)), ALL_NULL);
});

Deno.test("user agent: cutting never leaves half a surrogate pair", () => {
  const s = "Mozilla/5.0 (Linux; Android 9; " + "a".repeat(UA_MAX_LENGTH - 32) + "😀😀😀";
  assert.ok(s.length > UA_MAX_LENGTH);
  // The character at index UA_MAX_LENGTH - 1 is a high surrogate: a plain cut would split 😀.
  assert.equal(s.charCodeAt(UA_MAX_LENGTH - 1) >> 10, 0xd800 >> 10);
  assert.equal(s.slice(0, UA_MAX_LENGTH).isWellFormed(), false);
  const cut = capLength(s);
  assert.equal(cut.length, UA_MAX_LENGTH - 1);
  assert.ok(cut.isWellFormed());
  assert.equal(cut, s.slice(0, UA_MAX_LENGTH - 1)); // the whole emoji went
  // Nothing shorter than the limit is touched.
  assert.equal(capLength("curl/8.5.0 😀"), "curl/8.5.0 😀");
});

Deno.test("user agent: results are deeply frozen", () => {
  const parse = createUserAgentParser();
  const r = parse("Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0");
  for (const o of [r, r.browser, r.engine, r.os, r.device, r.cpu, EMPTY_USER_AGENT]) {
    assert.ok(Object.isFrozen(o));
  }
  assert.throws(() => {
    (r.browser as { name: string | null }).name = "x";
  }, TypeError);
});

Deno.test("user agent: the cache returns the same result for the same string", () => {
  const parse = createUserAgentParser({ cacheSize: 10 });
  const s = "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0";
  const first = parse(s);
  assert.equal(parse(s), first); // same object: served from the cache
  assert.deepEqual(createUserAgentParser({ cacheSize: 0 })(s), first);
});

Deno.test("user agent: the cache stays bounded (least recently used are evicted)", () => {
  const parse = createUserAgentParser({ cacheSize: 2 });
  const a = "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0";
  const b = "Mozilla/5.0 (X11; Linux x86_64; rv:124.0) Gecko/20100101 Firefox/124.0";
  const c = "Mozilla/5.0 (X11; Linux x86_64; rv:123.0) Gecko/20100101 Firefox/123.0";
  const ra = parse(a);
  parse(b);
  parse(c); // evicts a
  const ra2 = parse(a);
  assert.notEqual(ra2, ra);
  assert.deepEqual(ra2, ra);
  for (let k = 0; k < 10_000; k++) parse(`agent/${k}`); // must not grow without limit
  assert.notEqual(parse(a), ra2);
});

Deno.test("user agent: a cache size of 0 disables caching", () => {
  const parse = createUserAgentParser({ cacheSize: 0 });
  const s = "curl/8.5.0 (x86_64-pc-linux-gnu)";
  assert.notEqual(parse(s), parse(s));
  assert.deepEqual(parse(s), parse(s));
});

Deno.test("user agent: strings equal in their first UA_MAX_LENGTH characters share a cache entry", () => {
  const parse = createUserAgentParser();
  const head = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) " + "a".repeat(UA_MAX_LENGTH);
  assert.equal(parse(head + "one"), parse(head + "two"));
});

Deno.test("user agent: names and versions match ua-parser-js itself; types are the table's", () => {
  const parse = createUserAgentParser({ cacheSize: 0 });
  for (const { name, input, expected } of CASES) {
    // Only inputs the wrapper passes through unchanged.
    if (!input || input.trim() === "" || input.includes("\u0001")) continue;
    const raw = new UAParser(input).getResult();
    const ours = parse(input);
    assert.equal(ours.browser.name, raw.browser.name ?? null, name);
    assert.equal(ours.browser.version, raw.browser.version ?? null, name);
    assert.equal(ours.engine.name, raw.engine.name ?? null, name);
    assert.equal(ours.os.name, raw.os.name ?? null, name);
    assert.equal(ours.device.vendor, raw.device.vendor ?? null, name);
    assert.equal(ours.device.model, raw.device.model ?? null, name);
    assert.equal(ours.cpu.architecture, raw.cpu.architecture ?? "Unknown", name);
    // Where the library has a type it is kept; where it has none, the table above says
    // (written by hand: "desktop" for desktop systems, null for bots and tools).
    assert.equal(ours.device.type, raw.device.type ?? expected.device.type, name);
  }
});

Deno.test("user agent: desktop systems the parser leaves untyped become desktop", () => {
  const parse = createUserAgentParser({ cacheSize: 0 });
  const desktops = CASES.filter((c) => c.expected.device.type === "desktop");
  assert.ok(desktops.length >= 6);
  for (const { name, input } of desktops) {
    assert.equal(new UAParser(input!).getResult().device.type, undefined, name);
    assert.equal(parse(input).device.type, "desktop", name);
  }
});

Deno.test("user agent: mobile systems are never guessed to be desktops", () => {
  const parse = createUserAgentParser({ cacheSize: 0 });
  // Operating systems the library names but gives no device type for: not desktops.
  const untyped = [
    "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Mobile; Windows Phone 8.1; Android 4.0; ARM; Trident/7.0; Touch; rv:11.0; IEMobile/11.0) like iPhone OS 7_0_3 Mac OS X AppleWebKit/537 (KHTML, like Gecko) Mobile Safari/537",
  ];
  for (const input of untyped) {
    const result = parse(input);
    assert.notEqual(result.device.type, "desktop", `${result.os.name}: ${input}`);
  }
});
