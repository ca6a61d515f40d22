/**
 * The page's HTML: the structure, with every field the answer fills already
 * in place (so nothing moves when it arrives). Script and style are separate
 * files (the page's CSP allows nothing inline).
 */

import { MAP_HEIGHT, MAP_WIDTH } from "./world_map.ts";

export interface PageInput {
  app: string;
  style: string;
  world: string;
  bulkMax: number;
}

/** The rows of the answer: id and label. */
const DETAILS: readonly (readonly [string, string])[] = [
  ["ip", "Address"],
  ["location", "Location"],
  ["coordinates", "Coordinates"],
  ["timezone", "Time zone"],
  ["localtime", "Local time there"],
  ["currency", "Currency"],
  ["asn", "Network (ASN)"],
  ["org", "Organisation"],
  ["isp", "ISP"],
  ["useragent", "Your browser (from its user agent)"],
  ["security", "Security flags"],
  ["verdict", "Verdict"],
  ["reason", "Why"],
  ["matches", "Listed by"],
];

export function renderPage({ app, style, world, bulkMax }: PageInput): string {
  const rows = DETAILS.map(([id, label]) =>
    `<div class="row"><dt>${label}</dt><dd id="d-${id}">—</dd></div>`
  ).join("\n          ");
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="color-scheme" content="light dark">
  <title>ipintel: IP address lookup</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="${style}">
  <script type="module" src="${app}"></script>
</head>
<body>
  <a class="skip" href="#lookup-h">Skip to the lookup</a>
  <header>
    <h1>ipintel</h1>
    <p>Where an IP address is, who runs its network, and whether it is a known risk.</p>
  </header>
  <main id="main" data-bulk-max="${bulkMax}">
    <section id="you" aria-labelledby="you-h">
      <h2 id="you-h">Your address</h2>
      <p class="my-ip"><output id="my-ip">Finding your address…</output></p>
      <p id="my-summary" class="summary">&nbsp;</p>
      <noscript><p>This page needs JavaScript. Without it, the API answers directly:
        <a href="/me">/me</a> is your own address, <code>/ip/8.8.8.8</code> any other.</p></noscript>
    </section>

    <section id="key-section" aria-labelledby="key-h" hidden>
      <h2 id="key-h">API key</h2>
      <p id="key-reason">This server needs an API key.</p>
      <form id="key-form">
        <label for="api-key">API key (kept in this browser only, sent as the X-API-Key header)</label>
        <div class="inline">
          <input id="api-key" name="api-key" type="password" autocomplete="off" spellcheck="false" required>
          <button type="submit">Use this key</button>
          <button type="button" id="forget-key">Forget the key</button>
        </div>
      </form>
    </section>

    <section id="lookup" aria-labelledby="lookup-h">
      <h2 id="lookup-h" tabindex="-1">Look up an address</h2>
      <form id="lookup-form" role="search">
        <label for="ip">IPv4 or IPv6 address</label>
        <div class="inline">
          <input id="ip" name="ip" type="text" inputmode="text" autocomplete="off" autocapitalize="off"
            spellcheck="false" maxlength="100" placeholder="e.g. 8.8.8.8 or 2001:4860:4860::8888" required>
          <button type="submit">Look up</button>
        </div>
        ${asOfField()}
      </form>
      <p id="lookup-status" class="status" role="status" aria-live="polite">&nbsp;</p>
      <div class="answer">
        <figure class="map">
          <svg id="map" viewBox="0 0 ${MAP_WIDTH} ${MAP_HEIGHT}" role="img" aria-labelledby="map-title map-caption">
            <title id="map-title">World map</title>
            <rect class="sea" width="${MAP_WIDTH}" height="${MAP_HEIGHT}"/>
            <image href="${world}" width="${MAP_WIDTH}" height="${MAP_HEIGHT}"/>
            <g id="dots"></g>
            <g id="pin"></g>
          </svg>
          <figcaption id="map-caption">No address on the map yet.</figcaption>
        </figure>
        <dl id="details" class="details">
          ${rows}
        </dl>
      </div>
      <details class="curl">
        <summary>Copy as curl</summary>
        <pre><code id="curl">curl -s /me</code></pre>
        <button type="button" id="copy-curl" data-target="curl">Copy the command</button>
      </details>
    </section>

    <section id="as-section" aria-labelledby="as-h" hidden>
      <h2 id="as-h" tabindex="-1">Network</h2>
      <p id="as-status" class="status" role="status" aria-live="polite">&nbsp;</p>
      <dl class="details">
        <div class="row"><dt>Organisation</dt><dd id="d-as-name">—</dd></div>
        <div class="row"><dt>IPv4</dt><dd id="d-as-ipv4">—</dd></div>
        <div class="row"><dt>IPv6</dt><dd id="d-as-ipv6">—</dd></div>
        <div class="row"><dt>On lists</dt><dd id="d-as-lists">—</dd></div>
      </dl>
      <details class="prefixes">
        <summary id="as-prefixes-summary">Prefixes</summary>
        <ul id="as-prefixes" class="prefix-list"></ul>
      </details>
    </section>

    <section id="bulk" aria-labelledby="bulk-h">
      <h2 id="bulk-h">Many addresses at once</h2>
      <form id="bulk-form">
        <label for="bulk-ips">Up to ${bulkMax} addresses, separated by spaces, commas, semicolons or new lines</label>
        <textarea id="bulk-ips" name="ips" rows="5" spellcheck="false" autocomplete="off" required></textarea>
        <div class="inline">
          <button type="submit">Look them up</button>
          <button type="button" id="bulk-csv">Download as CSV</button>
        </div>
      </form>
      <p id="bulk-status" class="status" role="status" aria-live="polite">&nbsp;</p>
      <div class="table-wrap" tabindex="0" role="region" aria-labelledby="bulk-h">
        <table id="bulk-table">
          <caption class="sr-only">Bulk lookup results</caption>
          <thead>
            <tr><th scope="col">Address</th><th scope="col">Country</th><th scope="col">City</th>
              <th scope="col">ASN</th><th scope="col">Organisation</th><th scope="col">Threat</th></tr>
          </thead>
          <tbody id="bulk-rows"></tbody>
        </table>
      </div>
      <details class="curl">
        <summary>Copy as curl</summary>
        <pre><code id="bulk-curl">curl -s -X POST -H 'Content-Type: application/json' --data '{"ips":[]}' /bulk</code></pre>
        <button type="button" id="copy-bulk-curl" data-target="bulk-curl">Copy the command</button>
      </details>
    </section>

    <section id="rule" aria-labelledby="rule-h">
      <h2 id="rule-h">How the verdict is decided</h2>
      <ul>
        <li><strong>High</strong>: the address is a Tor exit node, or it is on a blocklist.</li>
        <li><strong>Medium</strong>: a VPN or anonymous proxy, or a hosting provider's range (servers, not people).</li>
        <li><strong>Low</strong>: none of these, according to the security sources installed.</li>
        <li><strong>Unknown</strong>: no security source is installed on this server, so nothing can be said.</li>
      </ul>
    </section>

    <section id="sources-section" aria-labelledby="sources-h">
      <h2 id="sources-h">Data sources</h2>
      <ul id="sources"><li>Loading the list of sources…</li></ul>
    </section>
  </main>
  <footer>
    <p>Served by ipintel. API: <a href="/openapi.json">/openapi.json</a> · <a href="/status">/status</a></p>
  </footer>
</body>
</html>
`;
}

/** The optional past time: the security lists as they stood then (docs/history.md). */
function asOfField(): string {
  return `<label for="at">As of (optional): the security lists at a past time, ISO 8601 with its zone</label>
        <div class="inline">
          <input id="at" name="at" type="text" autocomplete="off" spellcheck="false" maxlength="40"
            placeholder="e.g. 2026-11-20T13:45:00Z or 2026-11-20">
          <button type="button" id="at-clear">Now</button>
        </div>`;
}
