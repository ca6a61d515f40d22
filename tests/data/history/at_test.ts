import assert from "node:assert/strict";
import { AppError, STATUS_BY_CODE } from "../../../src/base/errors.ts";
import { checkAt, parseAt } from "../../../src/data/history/at.ts";
import type { History } from "../../../src/data/history/history.ts";

Deno.test("parseAt reads ISO 8601 times with their zone, and bare dates as midnight UTC", () => {
  const iso = (text: string) => parseAt(text)!.toISOString();
  assert.equal(iso("2026-11-20T13:45:00Z"), "2026-11-20T13:45:00.000Z");
  assert.equal(iso("2026-11-20T14:45:00+01:00"), "2026-11-20T13:45:00.000Z");
  assert.equal(iso("2026-11-20T08:45:00.250-0500"), "2026-11-20T13:45:00.250Z");
  assert.equal(iso("2026-11-20t13:45z"), "2026-11-20T13:45:00.000Z");
  assert.equal(iso("2026-11-20 13:45:00Z"), "2026-11-20T13:45:00.000Z");
  assert.equal(iso("2026-11-20"), "2026-11-20T00:00:00.000Z");
  assert.equal(iso("2024-02-29"), "2024-02-29T00:00:00.000Z");
  assert.equal(parseAt(undefined), null);
  assert.equal(parseAt(""), null);
});

Deno.test("parseAt refuses anything else with a 400 naming at and the value", () => {
  for (
    const text of [
      "not-a-time",
      "2026-11-20T13:45:00", // no zone: whose 13:45?
      "2026-02-29",
      "2026-13-01",
      "2026-11-31T00:00:00Z",
      "2026-11-20T24:00:00Z",
      "2026-11-20T13:60:00Z",
      "1732000000",
      "20261120",
      "yesterday",
    ]
  ) {
    assert.throws(() => parseAt(text), (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(STATUS_BY_CODE[error.code], 400);
      assert.ok(
        error.message.startsWith(`Invalid at ${JSON.stringify(text)}: expected an ISO 8601`),
      );
      return true;
    }, text);
  }
});

Deno.test("checkAt: before the history is a 422 saying where it starts; none kept is a 422; the future a 400", () => {
  const history = { start: new Date("2026-11-01T06:00:00Z") } as History;
  const now = new Date("2026-11-03T00:00:00Z");
  const status = (fn: () => void) => {
    try {
      fn();
      return 200;
    } catch (error) {
      return {
        status: STATUS_BY_CODE[(error as AppError).code],
        message: (error as Error).message,
      };
    }
  };
  assert.equal(status(() => checkAt(history, new Date("2026-11-01T06:00:00Z"), now)), 200);
  assert.deepEqual(status(() => checkAt(history, new Date("2026-10-01T00:00:00Z"), now)), {
    status: 422,
    message:
      "The list history starts at 2026-11-01T06:00:00.000Z: at 2026-10-01T00:00:00.000Z is before it, so the lists of that time are not known here",
  });
  const none = status(() => checkAt(null, new Date("2026-11-02T00:00:00Z"), now));
  assert.equal((none as { status: number }).status, 422);
  assert.match((none as { message: string }).message, /^No list history is kept on this server/);
  const future = status(() => checkAt(history, new Date("2026-11-04T00:00:00Z"), now));
  assert.equal((future as { status: number }).status, 400);
});
