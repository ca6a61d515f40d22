/// <reference lib="dom" />
/**
 * The lookup page in a real browser (headless Chromium): the real server on
 * the real default data, driven like a person with a keyboard would.
 */

import assert from "node:assert/strict";
import { parse as parseCsv } from "csv-parse/sync";
import type { Page } from "puppeteer-core";
import {
  chromiumAvailable,
  cli,
  launchBrowser,
  OUTPUT_DIR,
  type RunningServer,
  startServer,
} from "./_browser.ts";
import { LISTED, writeListedDataDir } from "./_lists.ts";
import { ignoredName } from "../../_skip.ts";

const available = chromiumAvailable();
const missing = available ? null : "chromium not available (no /usr/bin/chromium)";

const options = { ignore: !available, sanitizeResources: false, sanitizeOps: false };
/** Both lists were installed by one update: the history's first and last sighting (src/data/history). */
const SEEN = ", first seen 2026-11-20 06:00 UTC, last seen 2026-11-20 06:00 UTC";

/** What the browser reports as broken: script errors, CSP violations, failed loads. */
function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error}`));
  page.on("console", (message) => {
    // Failed API calls are reported below with their URL; anything else is a problem.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      problems.push(`console: ${message.text()}`);
    }
  });
  page.on("response", (response) => {
    if (response.status() >= 400) {
      problems.push(`${response.status()} ${new URL(response.url()).pathname}`);
    }
  });
  return problems;
}

/** The text of an element, once it matches `pattern` (no eval: the page's CSP forbids it). */
async function textWhen(page: Page, selector: string, pattern: RegExp): Promise<string> {
  await page.waitForFunction(
    (sel: string, source: string, flags: string) =>
      new RegExp(source, flags).test(document.querySelector(sel)?.textContent ?? ""),
    { timeout: 15_000 },
    selector,
    pattern.source,
    pattern.flags,
  );
  return await page.$eval(selector, (e) => e.textContent ?? "");
}

async function withServer(
  env: Record<string, string>,
  body: (server: RunningServer, page: Page, dir: string) => Promise<void>,
  beforeStart?: (dir: string) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-web-" });
  await beforeStart?.(dir);
  const server = await startServer(dir, env);
  const browser = await launchBrowser(`${dir}/profile`);
  try {
    const page = await browser.newPage();
    await body(server, page, dir);
  } finally {
    await browser.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: ignoredName(
    "the page looks up a typed address: country, ASN and a marker on the offline map",
    missing,
  ),
  ...options,
  fn: () =>
    withServer({}, async (server, page, dir) => {
      const problems = watchProblems(page);
      // Only this server may be contacted: anything else would fail offline.
      const foreign: string[] = [];
      page.on("request", (request) => {
        if (!request.url().startsWith(server.origin)) foreign.push(request.url());
      });
      await page.setViewport({ width: 1280, height: 900 });
      await page.goto(`${server.origin}/`, { waitUntil: "networkidle0" });

      // The caller first: from here that is 127.0.0.1, which has no data, and the page says so.
      const mine = await textWhen(page, "#my-summary", /\S\S/);
      assert.match(mine, /127\.0\.0\.1.*loopback/);

      // Keyboard only: focus the field, type, Enter.
      await page.focus("#ip");
      await page.keyboard.type("8.8.8.8");
      await page.keyboard.press("Enter");
      assert.equal(await textWhen(page, "#d-asn", /^AS15169$/), "AS15169");
      const expected = await (await fetch(`${server.origin}/ip/8.8.8.8`)).json();
      const geo = expected.data.geoLocation;
      assert.match(await page.$eval("#d-location", (e) => e.textContent!), /🇺🇸 United States/);
      assert.equal(await page.$eval("#d-org", (e) => e.textContent), expected.data.connection.org);
      assert.match(
        await page.$eval("#d-timezone", (e) => e.textContent!),
        new RegExp(expected.data.timezone.time_zone),
      );
      assert.match(await page.$eval("#d-currency", (e) => e.textContent!), /USD/);
      assert.match(await page.$eval("#d-useragent", (e) => e.textContent!), /Chrome/);
      // No security source in the default data: the verdict says so in words.
      assert.match(await page.$eval("#d-verdict", (e) => e.textContent!), /no security source/);
      assert.equal(await page.$eval("#d-matches", (e) => e.textContent), "On no list installed");
      assert.match(await page.$eval("#d-localtime", (e) => e.textContent!), /\d\d:\d\d:\d\d/);

      // The marker sits where the equirectangular map puts the API's coordinates.
      const marker = await page.$eval("#marker", (e) => ({
        cx: Number(e.getAttribute("cx")),
        cy: Number(e.getAttribute("cy")),
      }));
      assert.ok(Math.abs(marker.cx - (geo.longitude + 180) / 360 * 960) < 0.01, `cx ${marker.cx}`);
      assert.ok(Math.abs(marker.cy - (90 - geo.latitude) / 180 * 480) < 0.01, `cy ${marker.cy}`);
      assert.ok(await page.$("#accuracy"), "the accuracy_radius circle is drawn");
      // The URL is the shareable link, and it holds no key.
      assert.equal(new URL(page.url()).searchParams.get("ip"), "8.8.8.8");
      // The map geometry came from this server.
      const mapUrl = await page.$eval("#map image", (e) => e.getAttribute("href")!);
      const map = await fetch(new URL(mapUrl, server.origin));
      assert.equal(map.status, 200);
      assert.ok((await map.text()).includes("<path"), "the map has country geometry");
      // The sources come from /status, with the GeoLite2 attribution shown.
      const sources = await textWhen(
        page,
        "#sources",
        /data of/,
      );
      assert.match(sources, /MaxMind/);

      await Deno.mkdir(OUTPUT_DIR, { recursive: true });
      await page.screenshot({ path: `${OUTPUT_DIR}/desktop.png` });

      // A pre-filled link looks its address up at once.
      await page.goto(`${server.origin}/?ip=1.1.1.1`, { waitUntil: "networkidle0" });
      assert.equal(await page.$eval("#ip", (e) => (e as HTMLInputElement).value), "1.1.1.1");
      assert.equal(await textWhen(page, "#d-asn", /^AS13335$/), "AS13335");

      // A readable message for an invalid address; the page stays usable.
      await page.$eval("#ip", (e) => (e as HTMLInputElement).value = "");
      await page.focus("#ip");
      await page.keyboard.type("999.1.1.1");
      await page.keyboard.press("Enter");
      assert.match(
        await textWhen(page, "#lookup-status", /Invalid IP address "999\.1\.1\.1"/),
        /Invalid/i,
      );

      // Bulk: any separators, a table with one row per address, dots on the map.
      await page.focus("#bulk-ips");
      await page.keyboard.type("8.8.8.8, 1.1.1.1;2606:4700:4700::1111\nnot-an-ip");
      await page.click("#bulk-form button[type=submit]");
      await page.waitForFunction(() => document.querySelectorAll("#bulk-rows tr").length === 4, {
        timeout: 15_000,
      });
      const rows = await page.$$eval(
        "#bulk-rows tr",
        (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)),
      );
      assert.deepEqual(rows[0]!.slice(0, 2), ["8.8.8.8", "🇺🇸 United States"]);
      assert.equal(rows[0]![3], "AS15169");
      assert.equal(rows[1]![3], "AS13335");
      assert.equal(rows[2]![0], "2606:4700:4700::1111");
      assert.match(rows[3]!.join(" "), /not-an-ip.*Invalid/);
      // One dot per address the API places (here the ASN-only ones have no coordinates).
      const bulk = await (await fetch(`${server.origin}/bulk/8.8.8.8,1.1.1.1,2606:4700:4700::1111`))
        .json();
      const placed =
        bulk.data.responseArray.filter((item: { geoLocation: { latitude: unknown } }) =>
          typeof item.geoLocation.latitude === "number"
        ).length;
      assert.ok(placed >= 1);
      assert.equal(await page.$$eval("#dots circle", (c) => c.length), placed);
      assert.match(
        await page.$eval("#bulk-curl", (e) =>
          e.textContent!),
        /--data '\{"ips":\["8\.8\.8\.8"/,
      );

      // Download as CSV: the file the browser saves is the API's CSV, one row per address.
      const downloads = `${dir}/downloads`;
      const cdp = await page.createCDPSession();
      await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: downloads });
      await page.click("#bulk-csv");
      assert.match(await textWhen(page, "#bulk-status", /Downloaded/), /Downloaded 4 rows/);
      const file = `${downloads}/ipintel-bulk.csv`;
      const deadline = Date.now() + 10_000;
      while (!await Deno.stat(file).then(() => true, () => false)) {
        assert.ok(Date.now() < deadline, "the CSV was never saved");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const table = parseCsv(await Deno.readTextFile(file)) as string[][];
      assert.equal(table.length, 1 + 4, "a header and four rows");
      assert.equal(table[0]![0], "ip");
      assert.deepEqual(table.slice(1).map((row) => row[0]), [
        "8.8.8.8",
        "1.1.1.1",
        "2606:4700:4700::1111",
        "not-an-ip",
      ]);

      // Only the expected "no data" answers: /me from 127.0.0.1 (twice) and the invalid address.
      assert.deepEqual(problems, ["404 /me", "404 /me", "404 /ip/999.1.1.1"]);
      assert.deepEqual(foreign, []);
    }),
});

Deno.test({
  name: ignoredName(
    "the page explains the verdict: the reason and every list that names the address",
    missing,
  ),
  ...options,
  fn: async () => {
    const { dataDir, sourcesFile } = await writeListedDataDir();
    try {
      await withServer(
        { IPINTEL_DATA_DIR: dataDir, IPINTEL_SOURCES: sourcesFile },
        async (server, page) => {
          const problems = watchProblems(page);
          await page.goto(`${server.origin}/?ip=${LISTED}`, { waitUntil: "networkidle0" });
          assert.equal(
            await textWhen(page, "#d-reason", /Tor/),
            "Tor exit (tor-exits); on a threat list (blocklist)",
          );
          assert.match(await page.$eval("#d-verdict", (e) => e.textContent!), /^High risk/);
          // The base data has no place for it: no currency shown, not "null ()".
          assert.equal(await page.$eval("#d-currency", (e) => e.textContent), "—");
          assert.deepEqual(
            await page.$$eval("#d-matches li", (li) => li.map((e) => e.textContent)),
            [
              `tor-exits (tor): ${LISTED}, list of 2026-11-18${SEEN}`,
              `blocklist (threat): 185.241.208.0/24, list of 2026-11-20${SEEN}`,
            ],
          );
          await Deno.mkdir(OUTPUT_DIR, { recursive: true });
          await page.screenshot({ path: `${OUTPUT_DIR}/listed.png`, fullPage: true });

          // As of a past time: after the update, the lists of then; before it, the server says
          // where its history starts.
          await page.$eval("#at", (e) => (e as HTMLInputElement).value = "2026-11-22T12:00:00Z");
          await page.focus("#ip");
          await page.keyboard.press("Enter");
          assert.match(
            await textWhen(page, "#lookup-status", /as of/),
            /^Showing 185\.241\.208\.232: security lists as of 2026-11-22T12:00:00\.000Z \(location and network: current data\)$/,
          );
          assert.match(await page.$eval("#d-verdict", (e) => e.textContent!), /^High risk/);
          await page.$eval("#at", (e) => (e as HTMLInputElement).value = "2026-11-18");
          await page.keyboard.press("Enter");
          assert.match(
            await textWhen(page, "#lookup-status", /history/),
            /^The list history starts at 2026-11-20T06:00:00\.000Z/,
          );
          problems.splice(problems.indexOf(`422 /ip/${LISTED}`), 1); // asked for
          await page.click("#at-clear");
          await textWhen(page, "#lookup-status", /^Showing 185\.241\.208\.232$/);

          // An address on no list: the reason says so and the list is gone.
          await page.$eval("#ip", (e) => (e as HTMLInputElement).value = "");
          await page.focus("#ip");
          await page.keyboard.type("8.8.8.8");
          await page.keyboard.press("Enter");
          assert.equal(
            await textWhen(page, "#d-reason", /none/),
            "none of the installed security sources lists it",
          );
          assert.equal(
            await page.$eval("#d-matches", (e) => e.textContent),
            "On no list installed",
          );
          // This data's ASN database knows every address, 127.0.0.1 (/me) too: nothing failed.
          assert.deepEqual(problems, []);
        },
      );
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  },
});

Deno.test({
  name: ignoredName(
    "the answer's AS number opens the AS view: its name, size, lists and prefixes from /asn/{n}",
    missing,
  ),
  ...options,
  fn: () =>
    withServer({}, async (server, page) => {
      const problems = watchProblems(page);
      await page.goto(`${server.origin}/?ip=8.8.8.8`, { waitUntil: "networkidle0" });
      await textWhen(page, "#d-asn", /^AS15169$/);
      assert.ok(await page.$eval("#as-section", (e) => (e as HTMLElement).hidden));
      // Keyboard: the link takes focus, Enter opens the view.
      await page.focus("#d-asn a");
      await page.keyboard.press("Enter");
      assert.equal(await textWhen(page, "#as-status", /Showing/), "Showing AS15169");
      const expected = (await (await fetch(`${server.origin}/asn/15169`)).json()).data;
      assert.equal(await page.$eval("#as-h", (e) => e.textContent), "AS15169");
      assert.equal(
        await page.$eval(":focus", (e) => e.id),
        "as-h",
        "focus moves to the view",
      );
      assert.match(await page.$eval("#d-as-name", (e) => e.textContent!), /Google/);
      assert.equal(
        await page.$eval("#d-as-ipv4", (e) => e.textContent),
        `${expected.counts.ipv4Prefixes.toLocaleString("en-US")} prefixes, ${
          expected.counts.ipv4Addresses.toLocaleString("en-US")
        } addresses`,
      );
      // The default data has no lists.
      assert.equal(await page.$eval("#d-as-lists", (e) => e.textContent), "On no list installed");
      const prefixes = await page.$$eval("#as-prefixes li", (li) => li.map((e) => e.textContent));
      assert.deepEqual(prefixes, [...expected.prefixes.ipv4, ...expected.prefixes.ipv6]);
      assert.ok(prefixes.includes("8.8.8.0/24"));
      await page.$eval("#as-section details", (e) => (e as HTMLDetailsElement).open = true);
      await Deno.mkdir(OUTPUT_DIR, { recursive: true });
      const view = await page.$("#as-section");
      await view!.screenshot({ path: `${OUTPUT_DIR}/as-view.png` });
      // The caller (127.0.0.1) has no data in the default data: its 404 is expected.
      assert.deepEqual(problems.filter((p) => p !== "404 /me"), []);
    }),
});

Deno.test({
  name: ignoredName(
    "the page is readable at 360 px wide, and nothing moves when the answer arrives",
    missing,
  ),
  ...options,
  fn: () =>
    withServer({}, async (server, page) => {
      // Layout shifts, as Chromium measures them, from the first paint on.
      await page.evaluateOnNewDocument(() => {
        (globalThis as unknown as { shift: number }).shift = 0;
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries() as unknown as { value: number }[]) {
            (globalThis as unknown as { shift: number }).shift += entry.value;
          }
        }).observe({ type: "layout-shift", buffered: true });
      });
      await page.setViewport({ width: 360, height: 740, deviceScaleFactor: 1 });
      await page.goto(`${server.origin}/?ip=8.8.8.8`, { waitUntil: "networkidle0" });
      assert.equal(await textWhen(page, "#d-asn", /^AS15169$/), "AS15169");
      assert.ok(await page.$("#marker"));
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 360, `the page is ${width} px wide at 360`);
      const shift = await page.evaluate(() => (globalThis as unknown as { shift: number }).shift);
      assert.ok(shift < 0.05, `cumulative layout shift ${shift}`);
      await Deno.mkdir(OUTPUT_DIR, { recursive: true });
      await page.screenshot({ path: `${OUTPUT_DIR}/phone.png`, fullPage: true });

      // The dark scheme follows the system's preference.
      const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const light = await background();
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "dark" }]);
      const dark = await background();
      assert.notEqual(dark, light);
      await page.screenshot({ path: `${OUTPUT_DIR}/phone-dark.png` });
    }),
});

Deno.test({
  name: ignoredName(
    "with IPINTEL_AUTH=required the page asks for a key, keeps it in the browser, never in the URL",
    missing,
  ),
  ...options,
  fn: async () => {
    let key = "";
    await withServer(
      { IPINTEL_AUTH: "required" },
      async (server, page) => {
        await page.goto(`${server.origin}/?ip=8.8.8.8`, { waitUntil: "networkidle0" });
        await page.waitForSelector("#key-section:not([hidden])", { timeout: 15_000 });
        assert.match(await page.$eval("#key-reason", (e) => e.textContent!), /API key/);
        assert.equal(await page.$eval("#d-asn", (e) => e.textContent), "—");
        // The key field has the focus: type it and press Enter.
        await page.keyboard.type(key);
        await page.keyboard.press("Enter");
        assert.equal(await textWhen(page, "#d-asn", /^AS15169$/), "AS15169");
        assert.equal(await page.$eval("#key-section", (e) => (e as HTMLElement).hidden), true);
        assert.equal(await page.evaluate(() => localStorage.getItem("ipintel-api-key")), key);
        assert.ok(!page.url().includes(key), "the key is not in the URL");
        // The copied command names the header, not the key itself.
        const curl = await page.$eval("#curl", (e) => e.textContent!);
        assert.match(curl, /X-API-Key: \$IPINTEL_API_KEY/);
        assert.ok(!curl.includes(key));
        // A reload uses the stored key without asking again.
        await page.goto(`${server.origin}/?ip=1.1.1.1`, { waitUntil: "networkidle0" });
        assert.equal(await textWhen(page, "#d-asn", /^AS13335$/), "AS13335");
        assert.equal(await page.$eval("#key-section", (e) => (e as HTMLElement).hidden), true);
      },
      async (dir) => {
        const issued = JSON.parse(
          await cli(`${dir}/ipintel.kv`, "keys", "create", "--name", "browser", "--json"),
        );
        key = issued.key;
      },
    );
  },
});

Deno.test({
  name: ignoredName("over the limit the page says when to retry (Retry-After)", missing),
  ...options,
  fn: () =>
    withServer(
      { IPINTEL_AUTH: "optional", IPINTEL_ANON_RATE_LIMIT: "2", IPINTEL_RATE_WINDOW: "600" },
      async (server, page) => {
        await page.goto(`${server.origin}/?ip=8.8.8.8`, { waitUntil: "networkidle0" });
        assert.equal(await textWhen(page, "#d-asn", /^AS15169$/), "AS15169");
        // /ip/8.8.8.8 and /me used the two requests of the window; the third is refused.
        await page.$eval("#ip", (e) => (e as HTMLInputElement).value = "1.1.1.1");
        await page.click("#lookup-form button");
        const status = await textWhen(page, "#lookup-status", /Too many/);
        assert.match(status, /try again in \d+ s \(at /);
      },
    ),
});
