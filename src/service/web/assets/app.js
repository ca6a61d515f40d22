// The lookup page's script: calls the public API (/me, /ip/{ip}, POST /bulk,
// /status) exactly as any client does, so keys and limits apply. No inline
// code, no eval: the page's CSP allows scripts from this server only.

const MAP_WIDTH = 960;
const MAP_HEIGHT = 480;
const KM_PER_DEGREE = 111.32;
const KEY_STORAGE = "ipintel-api-key";
const SVG = "http://www.w3.org/2000/svg";

const byId = (id) => document.getElementById(id);
const main = byId("main");
const bulkMax = Number(main.dataset.bulkMax) || 1000;

/** An answer from the API that is not a success. */
class ApiError extends Error {
  constructor(status, message, retryAfter) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

function storedKey() {
  try {
    return localStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

/** Calls the API; the key goes in the X-API-Key header, never in the URL. */
async function api(path, init = {}) {
  const headers = new Headers(init.headers);
  headers.set("Accept", "application/json");
  const key = storedKey();
  if (key) headers.set("X-API-Key", key);
  let response;
  try {
    response = await fetch(path, { ...init, headers, cache: "no-store" });
  } catch {
    throw new ApiError(0, "Could not reach the server: check the connection and try again", null);
  }
  if (response.ok) return response;
  let message = `The server answered ${response.status}`;
  try {
    const body = await response.json();
    if (body && typeof body.message === "string") message = body.message;
  } catch {
    // Not JSON: keep the status line.
  }
  throw new ApiError(response.status, message, response.headers.get("retry-after"));
}

/** The words for an error, with when to retry for a 429. */
function describeError(error) {
  if (!(error instanceof ApiError)) return `Something went wrong: ${error}`;
  if (error.status === 429) {
    const seconds = Number(error.retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) {
      const at = new Date(Date.now() + seconds * 1000).toLocaleTimeString();
      return `Too many requests: try again in ${seconds} s (at ${at}). ${error.message}`;
    }
    return `Too many requests: try again later. ${error.message}`;
  }
  // The API's own messages name the input and the reason ("Invalid IP address ...",
  // "No data for IP address ..."): shown as they are.
  return error.message;
}

// ---- API key --------------------------------------------------------------

let retriesAfterKey = [];

/** Shows the key form after a 401, and remembers what to run once a key is given. */
function askForKey(error, retry) {
  retriesAfterKey.push(retry);
  const section = byId("key-section");
  byId("key-reason").textContent = storedKey()
    ? `The stored API key was refused: ${error.message}. Enter another key.`
    : `This server needs an API key: ${error.message}.`;
  section.hidden = false;
  byId("api-key").focus();
}

byId("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const value = byId("api-key").value.trim();
  if (!value) return;
  try {
    localStorage.setItem(KEY_STORAGE, value);
  } catch {
    byId("key-reason").textContent = "This browser does not allow storing the key";
    return;
  }
  byId("api-key").value = "";
  byId("key-section").hidden = true;
  const retries = retriesAfterKey;
  retriesAfterKey = [];
  for (const retry of retries) retry();
  updateCurl();
});

byId("forget-key").addEventListener("click", () => {
  try {
    localStorage.removeItem(KEY_STORAGE);
  } catch {
    // Nothing stored.
  }
  byId("key-reason").textContent = "The key is forgotten.";
  updateCurl();
});

/** Runs an API action; a 401 asks for a key and runs it again once one is given. */
async function withKey(action, report) {
  try {
    await action();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      report(`An API key is needed: ${error.message}`);
      askForKey(error, () => withKey(action, report));
    } else {
      report(describeError(error));
    }
  }
}

// ---- Map ------------------------------------------------------------------

/** The equirectangular projection the server drew the map with. */
function project(latitude, longitude) {
  return [(longitude + 180) / 360 * MAP_WIDTH, (90 - latitude) / 180 * MAP_HEIGHT];
}

function svgElement(name, attributes) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

function hasPlace(geo) {
  return geo && typeof geo.latitude === "number" && typeof geo.longitude === "number";
}

/** The marker at the coordinates and an ellipse for accuracy_radius (wider towards the poles). */
function showPin(data) {
  const pin = byId("pin");
  const geo = data.geoLocation;
  pin.replaceChildren();
  if (!hasPlace(geo)) {
    byId("map-caption").textContent = `No coordinates are known for ${data.ip}.`;
    return;
  }
  const [x, y] = project(geo.latitude, geo.longitude);
  if (typeof geo.accuracy_radius === "number" && geo.accuracy_radius > 0) {
    const ry = geo.accuracy_radius / KM_PER_DEGREE * MAP_HEIGHT / 180;
    const rx = ry / Math.max(Math.cos(geo.latitude * Math.PI / 180), 0.05);
    pin.append(svgElement("ellipse", { id: "accuracy", cx: x, cy: y, rx, ry }));
  }
  const marker = svgElement("circle", { id: "marker", cx: x, cy: y, r: 5 });
  marker.dataset.ip = data.ip;
  pin.append(marker);
  const radius = typeof geo.accuracy_radius === "number"
    ? `, within about ${geo.accuracy_radius} km`
    : "";
  byId("map-caption").textContent = `${data.ip} at ${geo.latitude}, ${geo.longitude}${radius}.`;
}

function showDots(items) {
  const dots = byId("dots");
  dots.replaceChildren();
  for (const item of items) {
    if (!hasPlace(item.geoLocation)) continue;
    const [x, y] = project(item.geoLocation.latitude, item.geoLocation.longitude);
    const dot = svgElement("circle", { class: "dot", cx: x, cy: y, r: 3 });
    dot.append(svgElement("title", {}));
    dot.firstChild.textContent = item.ip;
    dots.append(dot);
  }
}

// ---- One address ----------------------------------------------------------

const VERDICTS = {
  high: "High risk: a Tor exit node, or on a blocklist",
  medium: "Medium risk: a VPN or anonymous proxy, a hosting provider's range, or a fake crawler",
  low: "Low risk: none of Tor, blocklists, VPN, proxy or hosting, in the sources installed",
};
const NO_SECURITY = "Unknown: no security source is installed on this server";

function yesNo(value) {
  return value === true ? "yes" : value === false ? "no" : "unknown";
}

function joined(parts, separator = ", ") {
  return parts.filter((p) => p !== null && p !== undefined && p !== "").join(separator);
}

/** The country's flag from its two-letter code (regional indicator letters). */
function flagOf(code) {
  if (typeof code !== "string" || !/^[A-Z]{2}$/.test(code)) return "";
  return String.fromCodePoint(...[...code].map((c) => 0x1f1e6 + c.charCodeAt(0) - 65));
}

function placeOf(geo) {
  if (!geo) return null;
  const place = joined([geo.city, geo.region, geo.country]);
  if (!place) return null;
  return joined([flagOf(geo.countryCode), place, geo.continent ? `(${geo.continent})` : null], " ");
}

function set(id, text) {
  byId(`d-${id}`).textContent = text === null || text === undefined || text === "" ? "—" : text;
}

let clockTimer = null;

/** The live local time in the address's time zone, ticking every second. */
function startClock(zone) {
  clearInterval(clockTimer);
  if (!zone) return set("localtime", null);
  let format;
  try {
    format = new Intl.DateTimeFormat(undefined, {
      timeZone: zone,
      weekday: "short",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
  } catch {
    return set("localtime", null);
  }
  const tick = () => set("localtime", format.format(new Date()));
  tick();
  clockTimer = setInterval(tick, 1000);
}

function userAgentText(ua) {
  if (!ua) return null;
  const name = (part) => part ? joined([part.name, part.version], " ") : "";
  const device = ua.device ? joined([ua.device.vendor, ua.device.model, ua.device.type], " ") : "";
  const text = joined([
    name(ua.browser),
    ua.engine && ua.engine.name ? `engine ${name(ua.engine)}` : "",
    ua.os && ua.os.name ? `on ${name(ua.os)}` : "",
    device,
  ]);
  return text || "not recognised";
}

/** The groups the page shows, with the opt-in risk that explains the verdict: one request. */
const FIELDS = "?get=geoLocation,timezone,currency,connection,userAgent,security,risk";

/** The dataDate of a list: its day, or that none is known. */
function listDate(date) {
  return typeof date === "string" ? `list of ${date.slice(0, 10)}` : "list date unknown";
}

/** Why the verdict is what it is: the API's reason and every list that names the address. */
function showRisk(risk) {
  // The verdict row already says the level: the reason without its "high: " prefix.
  set("reason", risk && risk.reason.replace(/^\w+: /, ""));
  const matches = risk ? risk.matches : [];
  if (matches.length === 0) return set("matches", risk ? "On no list installed" : null);
  const list = document.createElement("ul");
  list.className = "matches";
  for (const { source, kind, network, dataDate, firstSeen, lastSeen } of matches) {
    const item = document.createElement("li");
    item.textContent = `${source} (${kind}): ${network}, ${listDate(dataDate)}${
      seenText(firstSeen, lastSeen)
    }`;
    list.append(item);
  }
  byId("d-matches").replaceChildren(list);
}

/** When the kept history first and last saw the entry on its list; nothing when none is kept. */
function seenText(firstSeen, lastSeen) {
  const time = (iso) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return typeof firstSeen === "string" && typeof lastSeen === "string"
    ? `, first seen ${time(firstSeen)}, last seen ${time(lastSeen)}`
    : "";
}

/** The `at` parameter from the time field (the server checks it), or "" for now. */
function asOfParam() {
  const value = byId("at").value.trim();
  return value ? `&at=${encodeURIComponent(value)}` : "";
}

byId("at-clear").addEventListener("click", () => {
  byId("at").value = "";
  if (current) lookup(current, false);
});

function showAnswer(data) {
  const geo = data.geoLocation || {};
  const tz = data.timezone;
  const currency = data.currency;
  const connection = data.connection || {};
  const security = data.security || {};
  set("ip", data.ip);
  set("location", placeOf(geo));
  set(
    "coordinates",
    hasPlace(geo)
      ? joined([
        `${geo.latitude}, ${geo.longitude}`,
        typeof geo.accuracy_radius === "number" ? `± ${geo.accuracy_radius} km` : null,
      ], " ")
      : null,
  );
  set(
    "timezone",
    tz ? joined([tz.time_zone, joined([tz.abbr, tz.utc && `UTC${tz.utc}`])], " · ") : null,
  );
  startClock(tz && tz.time_zone);
  set(
    "currency",
    // An address without a country has a currency object of nulls: shown as a dash.
    currency && currency.code
      ? `${currency.name} (${joined([currency.code, currency.symbol], " ")})`
      : null,
  );
  showAsLink(connection.asn_number);
  set("org", connection.org || connection.asn_org);
  set("isp", joined([connection.isp, connection.connection_type, connection.domain]));
  set("useragent", userAgentText(data.userAgent));
  set("security", `VPN or proxy: ${yesNo(security.isVpn)} · Tor exit: ${yesNo(security.isTor)}`);
  const verdict = security.isThreat;
  set(
    "verdict",
    verdict === null || verdict === undefined ? NO_SECURITY : VERDICTS[verdict] || verdict,
  );
  byId("d-verdict").dataset.level = verdict || "unknown";
  showRisk(data.risk);
  showPin(data);
}

// ---- The AS view -------------------------------------------------------------

/** The answer's AS number as a link to its AS view (the API's /asn/{n} without a script). */
function showAsLink(asn) {
  if (typeof asn !== "number") return set("asn", null);
  const link = document.createElement("a");
  link.href = `/asn/${asn}`;
  link.textContent = `AS${asn}`;
  link.title = "Its prefixes, size and the lists naming it";
  link.addEventListener("click", (event) => {
    event.preventDefault();
    showAs(asn);
  });
  byId("d-asn").replaceChildren(link);
}

/** Prefixes listed on the page at most; the API answers them all (CSV: one a row). */
const PREFIXES_SHOWN = 1000;

const count = (n) => n.toLocaleString();

function asStatus(text) {
  byId("as-status").textContent = text || "\u00a0";
}

function showAsData(data) {
  const { counts, prefixes, lists } = data;
  byId("as-h").textContent = `AS${data.asn}`;
  set("as-name", joined([data.name, data.country], " · "));
  set(
    "as-ipv4",
    `${count(counts.ipv4Prefixes)} prefixes, ${count(counts.ipv4Addresses)} addresses`,
  );
  set(
    "as-ipv6",
    `${count(counts.ipv6Prefixes)} prefixes, ${count(counts.ipv6Slash64s)} /64 networks`,
  );
  if (lists.length === 0) set("as-lists", "On no list installed");
  else {
    const list = document.createElement("ul");
    list.className = "matches";
    for (const { source, kind, ipv4Addresses, ipv6Slash64s } of lists) {
      const item = document.createElement("li");
      item.textContent = `${source} (${kind}): ${
        joined([
          ipv4Addresses ? `${count(ipv4Addresses)} IPv4 addresses` : null,
          ipv6Slash64s ? `${count(ipv6Slash64s)} IPv6 /64s` : null,
        ])
      }`;
      list.append(item);
    }
    byId("d-as-lists").replaceChildren(list);
  }
  const all = [...prefixes.ipv4, ...prefixes.ipv6];
  const shown = all.slice(0, PREFIXES_SHOWN);
  byId("as-prefixes").replaceChildren(...shown.map((prefix) => {
    const item = document.createElement("li");
    item.textContent = prefix;
    return item;
  }));
  byId("as-prefixes-summary").textContent = all.length > shown.length
    ? `The first ${count(shown.length)} of ${count(all.length)} prefixes`
    : `All ${count(all.length)} prefixes`;
}

/** Fetches /asn/{n} (with the key, as every call) and shows the AS under the answer. */
function showAs(asn) {
  const section = byId("as-section");
  section.hidden = false;
  asStatus(`Looking up AS${asn}…`);
  return withKey(async () => {
    const response = await api(`/asn/${asn}`);
    const { data } = await response.json();
    showAsData(data);
    asStatus(`Showing AS${data.asn}`);
    byId("as-h").focus();
  }, asStatus);
}

function lookupStatus(text) {
  byId("lookup-status").textContent = text || "\u00a0";
}

let current = null; // the address shown, or null for the caller's own

/** Looks up one address (null: the caller's own) and shows it; `push` records it in the URL. */
function lookup(ip, push) {
  current = ip;
  updateCurl();
  lookupStatus(ip ? `Looking up ${ip}…` : "Looking up your address…");
  return withKey(async () => {
    const path = (ip ? `/ip/${encodeURIComponent(ip)}` : "/me") + FIELDS + asOfParam();
    const response = await api(path);
    const { data } = await response.json();
    if (current !== ip) return; // a newer lookup has started
    showAnswer(data);
    if (!ip) showMine(data);
    const asOf = data.security && data.security.asOf;
    lookupStatus(
      (ip ? `Showing ${data.ip}` : "Showing your own address") +
        (asOf ? `: security lists as of ${asOf} (location and network: current data)` : ""),
    );
    if (push) {
      const url = ip ? `?ip=${encodeURIComponent(ip)}` : location.pathname;
      history.pushState({ ip }, "", url);
    }
  }, lookupStatus);
}

function showMine(data) {
  byId("my-ip").textContent = data.ip;
  const geo = data.geoLocation;
  const connection = data.connection || {};
  byId("my-summary").textContent = joined([
    placeOf(geo),
    typeof connection.asn_number === "number"
      ? `AS${connection.asn_number} ${connection.asn_org || ""}`.trim()
      : null,
  ], " · ") || "Nothing is known about this address";
}

/** The caller's own address, shown at the top whatever else is looked up. */
function loadMine() {
  return withKey(async () => {
    const response = await api(`/me${FIELDS}`);
    const { data } = await response.json();
    showMine(data);
    if (current === null) showAnswer(data);
  }, (text) => {
    // "No data for IP address "127.0.0.1": ..." still names the caller's address.
    const named = /"([^"]+)"/.exec(text);
    byId("my-ip").textContent = named ? named[1] : "Unknown";
    byId("my-summary").textContent = text;
  });
}

byId("lookup-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const ip = byId("ip").value.trim();
  if (ip) lookup(ip, true);
});

addEventListener("popstate", () => {
  const ip = new URLSearchParams(location.search).get("ip");
  byId("ip").value = ip || "";
  if (ip) lookup(ip, false);
  else lookup(null, false);
});

// ---- Copy as curl -----------------------------------------------------------

/** One shell word, single-quoted. */
function shellQuote(text) {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function keyOption() {
  return storedKey() ? ` -H "X-API-Key: $IPINTEL_API_KEY"` : "";
}

function updateCurl() {
  const at = asOfParam(); // the same past time as the answer shown
  const path = (current ? `/ip/${encodeURIComponent(current)}` : "/me") + (at && `?${at.slice(1)}`);
  byId("curl").textContent = `curl -s${keyOption()} ${shellQuote(location.origin + path)}`;
}

function updateBulkCurl(ips) {
  const body = JSON.stringify({ ips });
  byId("bulk-curl").textContent =
    `curl -s -X POST${keyOption()} -H 'Content-Type: application/json'` +
    ` --data ${shellQuote(body)} ${shellQuote(`${location.origin}/bulk`)}`;
}

for (const button of document.querySelectorAll("button[data-target]")) {
  button.addEventListener("click", async () => {
    const code = byId(button.dataset.target);
    try {
      await navigator.clipboard.writeText(code.textContent);
      button.textContent = "Copied";
    } catch {
      // No clipboard (e.g. plain http): select the text for Ctrl+C instead.
      const range = document.createRange();
      range.selectNodeContents(code);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = "Selected: press Ctrl+C";
    }
    setTimeout(() => button.textContent = "Copy the command", 2000);
  });
}

// ---- Bulk -------------------------------------------------------------------

function bulkStatus(text) {
  byId("bulk-status").textContent = text || "\u00a0";
}

/** The pasted addresses: any mix of spaces, commas, semicolons and new lines. */
function bulkList() {
  return byId("bulk-ips").value.split(/[\s,;]+/).filter(Boolean);
}

function checkedBulkList() {
  const ips = bulkList();
  if (ips.length === 0) {
    bulkStatus("Paste at least one address");
    return null;
  }
  if (ips.length > bulkMax) {
    bulkStatus(`Too many addresses: ${ips.length} given, at most ${bulkMax}`);
    return null;
  }
  updateBulkCurl(ips);
  return ips;
}

function bulkRequest(ips, format) {
  const query = format ? `?format=${format}` : "";
  return api(`/bulk${query}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ ips }),
  });
}

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text === null || text === undefined || text === "" ? "—" : String(text);
  return td;
}

function showBulk(items) {
  const rows = items.map((item) => {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = item.ip;
    tr.append(th);
    if (item.error) {
      const td = cell(item.error.message);
      td.colSpan = 5;
      td.className = "error";
      tr.append(td);
      return tr;
    }
    const geo = item.geoLocation || {};
    const connection = item.connection || {};
    const threat = item.security ? item.security.isThreat : null;
    tr.append(
      cell(geo.country ? `${flagOf(geo.countryCode)} ${geo.country}`.trim() : null),
      cell(geo.city),
      cell(typeof connection.asn_number === "number" ? `AS${connection.asn_number}` : null),
      cell(connection.org || connection.asn_org),
      cell(threat === null || threat === undefined ? "unknown" : threat),
    );
    return tr;
  });
  byId("bulk-rows").replaceChildren(...rows);
  showDots(items);
}

byId("bulk-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const ips = checkedBulkList();
  if (!ips) return;
  bulkStatus(`Looking up ${ips.length} addresses…`);
  withKey(async () => {
    const response = await bulkRequest(ips, null);
    const { data } = await response.json();
    showBulk(data.responseArray);
    const failed = data.responseArray.filter((item) => item.error).length;
    // A streamed answer that stopped early (the rate limit ran out) says so in its last record.
    bulkStatus(
      data.incomplete
        ? data.incomplete.message
        : `${data.responseArray.length} looked up${failed ? `, ${failed} without an answer` : ""}`,
    );
  }, bulkStatus);
});

byId("bulk-csv").addEventListener("click", () => {
  const ips = checkedBulkList();
  if (!ips) return;
  withKey(async () => {
    const response = await bulkRequest(ips, "csv");
    const url = URL.createObjectURL(await response.blob());
    const link = document.createElement("a");
    link.href = url;
    link.download = "ipintel-bulk.csv";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    bulkStatus(`Downloaded ${ips.length} rows as ipintel-bulk.csv`);
  }, bulkStatus);
});

// ---- Data sources -----------------------------------------------------------

function sourceItem(source) {
  const li = document.createElement("li");
  const name = document.createElement("strong");
  name.textContent = source.name;
  li.append(name);
  if (source.status !== "installed") {
    li.append(` (${source.kind}): not installed. ${source.reason || ""}`);
    return li;
  }
  li.append(` (${source.kind}): data of ${source.dataDate || "an unknown date"}`);
  if (typeof source.ageDays === "number") li.append(`, ${source.ageDays} days old`);
  if (source.license) li.append(`. Licence: ${source.license}`);
  if (source.attribution) {
    const attribution = document.createElement("span");
    attribution.className = "attribution";
    attribution.textContent = source.attribution;
    li.append(". ", attribution);
  }
  return li;
}

async function loadSources() {
  const list = byId("sources");
  try {
    const response = await api("/status");
    const { data } = await response.json();
    list.replaceChildren(...data.sources.map(sourceItem));
  } catch (error) {
    const li = document.createElement("li");
    li.textContent = `The list of sources is not available: ${describeError(error)}`;
    list.replaceChildren(li);
  }
}

// ---- Start ------------------------------------------------------------------

const initial = new URLSearchParams(location.search).get("ip");
loadSources();
if (initial) {
  byId("ip").value = initial;
  current = initial;
  // Sequential: a 401 then asks for the key once.
  lookup(initial, false).then(loadMine);
} else {
  loadMine();
  updateCurl();
}
