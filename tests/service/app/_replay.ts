/** The recorded requests of the replay test (tests/fixtures/replay_answers.json), and how to send one. */

import type { App } from "../../../src/service/app/app.ts";
import { peer } from "../../_helpers.ts";

export interface Recorded {
  request: { path: string; method: string; headers?: Record<string, string>; body?: string };
  status: number;
  headers: [string, string][];
  body: string;
}

export const RECORDED: Recorded[] = JSON.parse(
  await Deno.readTextFile(new URL("../../fixtures/replay_answers.json", import.meta.url)),
);

/** Sends a recorded request to `app` from 81.2.69.142, as the recording did. */
export function replay(app: App, { request }: Recorded): Promise<Response> {
  return Promise.resolve(app.fetch(
    new Request(`http://localhost${request.path}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
    }),
    peer("81.2.69.142"),
  ));
}
