let y = 0;
const slab = new Uint8Array(1 << 16);
const buf = slab.buffer;
for (let r = 0; r < 3; r++) {
let t = performance.now();
for (let k = 0; k < 1_000_000; k++) y += slab.subarray((k & 1023) * 16, (k & 1023) * 16 + 16).length;
console.log("subarray", (performance.now() - t).toFixed(0));
t = performance.now();
for (let k = 0; k < 1_000_000; k++) y += new Uint8Array(buf, (k & 1023) * 16, 16).length;
console.log("view", (performance.now() - t).toFixed(0));
t = performance.now();
for (let k = 0; k < 1_000_000; k++) y += Uint8Array.of(1,2,3,4).length;
console.log("of", (performance.now() - t).toFixed(0));
t = performance.now();
for (let k = 0; k < 1_000_000; k++) y += new Uint8Array(4).length;
console.log("new4", (performance.now() - t).toFixed(0));
}
console.log(y);
