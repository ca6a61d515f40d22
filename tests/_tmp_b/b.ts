import { parseIp, formatIpv6 } from "../../src/ip/parse.ts";
const inputs = ["8.8.8.8", "2001:db8::1", "::ffff:1.2.3.4", "2606:4700:4700::1111", "192.168.1.1", "fe80::1:2:3:4"];
for (const inp of inputs) {
  let x = 0;
  for (let k = 0; k < 200_000; k++) x += parseIp(inp).bytes.length;
  const t = performance.now();
  for (let k = 0; k < 1_000_000; k++) x += parseIp(inp).bytes.length;
  console.log(inp, "ns/op", ((performance.now() - t)).toFixed(0));
}
const b = parseIp("2606:4700:4700::1111").bytes;
let t = performance.now(); let y = 0;
for (let k = 0; k < 1_000_000; k++) y += formatIpv6(b).length;
console.log("format", (performance.now() - t).toFixed(0));
t = performance.now();
for (let k = 0; k < 1_000_000; k++) y += new Uint8Array(16).length;
console.log("alloc", (performance.now() - t).toFixed(0));
