import { renderSuccess } from "../../src/format/render.ts";
import { applySelection, parseFieldSelection } from "../../src/format/select.ts";
import { asJson, sampleResult } from "./_sample.ts";
const r = sampleResult();
function time(name: string, n: number, f: () => unknown) {
  for (let i = 0; i < 1000; i++) f();
  const t = performance.now(); for (let i = 0; i < n; i++) f(); const us = (performance.now() - t) * 1000 / n;
  console.log(name.padEnd(40), us.toFixed(2), "µs");
}
time("parseFieldSelection (cached)", 200000, () => parseFieldSelection("city,currency.code,userAgent.browser.name"));
const sel = parseFieldSelection("city,currency.code,userAgent.browser.name,security");
time("applySelection", 500000, () => applySelection(r, sel));
time("json single", 100000, () => renderSuccess(asJson(r), "json"));
time("xml single", 20000, () => renderSuccess(asJson(r), "xml"));
time("csv single", 20000, () => renderSuccess(asJson(r), "csv"));
const bulk = { responseArray: Array.from({ length: 1000 }, () => asJson(r)) };
time("xml bulk 1000", 20, () => renderSuccess(bulk, "xml"));
time("csv bulk 1000", 20, () => renderSuccess(bulk, "csv"));
time("json bulk 1000", 50, () => renderSuccess(bulk, "json"));
