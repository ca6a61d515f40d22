import { openMmdb } from "../src/mmdb/reader.ts";
import { parseIp } from "../src/ip/parse.ts";
import { rawMmdb } from "./mmdb/_raw.ts";
const mk = (data: number[]) => openMmdb(rawMmdb({ ipVersion: 6, networks: [{ network: "1.2.3.0/24", offset: 0 }], data: new Uint8Array(data) }));
// map 1 entry: key "a" (0x41 0x61), value pointer ss=0 vvv=0 -> offset b0
const cases: Record<string, number[]> = {
  beyond: [0xe1, 0x41, 0x61, 0x20 | 0x07, 0xff],       // pointer to 0x7ff
  self: [0xe1, 0x41, 0x61, 0x20, 0x00],                 // pointer to offset 0 (the map itself)
  bigp: [0xe1, 0x41, 0x61, 0x38, 0xff, 0xff, 0xff, 0xff],
  truncString: [0xe1, 0x41, 0x61, 0x5f],               // string of 31 bytes but none
  str: [0x43, 0x61, 0x62, 0x63],
  arr: [0x01, 0x04, 0x41, 0x61],
};
for (const [name, d] of Object.entries(cases)) {
  try {
    const db = mk(d);
    const t = Date.now();
    const r = db.getBytes(parseIp("1.2.3.4").bytes);
    console.log(name, "->", JSON.stringify(r), Date.now() - t);
  } catch (e) { console.log(name, "threw", (e as Error).constructor.name, (e as Error).message.slice(0, 100)); }
}
