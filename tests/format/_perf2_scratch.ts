import { stringify } from "csv-stringify/sync";
import { XMLBuilder } from "fast-xml-parser";
import { sampleResult } from "./_sample.ts";
function time(name: string, n: number, f: () => unknown) {
  for (let i = 0; i < 200; i++) f();
  const t = performance.now(); for (let i = 0; i < n; i++) f(); const us = (performance.now() - t) * 1000 / n;
  console.log(name.padEnd(40), us.toFixed(2), "µs");
}
const header = Array.from({ length: 49 }, (_, i) => "col" + i);
const row = Array.from({ length: 49 }, (_, i) => "value" + i);
time("stringify 2 records x49", 20000, () => stringify([header, row], { record_delimiter: "\r\n", quote_record_delimiter: true }));
const rows = [header, ...Array.from({ length: 1000 }, () => row)];
time("stringify 1001 records", 20, () => stringify(rows, { record_delimiter: "\r\n", quote_record_delimiter: true }));
time("stringify 1001 records defaults", 20, () => stringify(rows));
const b = new XMLBuilder({ processEntities: false });
const r = { response: { success: true, data: sampleResult() } };
time("xmlbuilder single default", 20000, () => b.build(r));
