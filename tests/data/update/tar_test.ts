import assert from "node:assert/strict";
import { gunzip } from "../../../src/data/update/npm_package.ts";
import { readTar, type TarEntry } from "../../../src/data/update/tar.ts";

// Archives are made by the system's GNU tar, so readTar is checked against a real writer.

const LONG_DIR = `${"d".repeat(60)}/${"e".repeat(60)}`;
const LONG_PATH = `package/${LONG_DIR}/long-file-name.txt`; // 143 characters
const DATA = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) % 256); // not a block multiple

/** The regular files of the test tree, as readTar should list them (tar --sort=name order). */
const FILES: { path: string; bytes: Uint8Array }[] = [
  { path: "package/data.bin", bytes: DATA },
  { path: LONG_PATH, bytes: new TextEncoder().encode("hello\n") },
  { path: "package/empty.txt", bytes: new Uint8Array() },
  { path: "package/nested/package.json", bytes: new TextEncoder().encode('{"name":"x"}\n') },
];

/** Writes the test tree (files, an empty directory and a symlink) into a new temp dir. */
async function writeTree(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-tar-" });
  for (const file of FILES) {
    const path = `${dir}/${file.path}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeFile(path, file.bytes);
  }
  await Deno.mkdir(`${dir}/package/empty-dir`);
  await Deno.symlink("data.bin", `${dir}/package/link-to-data`);
  return dir;
}

/** Runs `tar <args> -f <out> -C <dir> package` and returns the archive's bytes. */
async function tar(dir: string, args: string[], out = "out.tar"): Promise<Uint8Array> {
  const result = await new Deno.Command("tar", {
    args: [...args, "--sort=name", "-f", `${dir}/${out}`, "-C", dir, "package"],
    stderr: "piped",
  }).output();
  assert.ok(result.success, `tar failed: ${new TextDecoder().decode(result.stderr)}`);
  return await Deno.readFile(`${dir}/${out}`);
}

const tree = await writeTree();
globalThis.addEventListener("unload", () => Deno.removeSync(tree, { recursive: true }));
const archives: Record<string, Uint8Array> = {
  gnu: await tar(tree, ["--format=gnu", "-c"], "gnu.tar"), // long names as ././@LongLink entries
  ustar: await tar(tree, ["--format=ustar", "-c"], "ustar.tar"), // long names split via prefix
};

const summary = (entries: TarEntry[]) => entries.map((e) => ({ path: e.path, bytes: e.bytes }));

Deno.test("readTar() lists the regular files of GNU and ustar archives made by tar, with content", () => {
  for (const [format, archive] of Object.entries(archives)) {
    assert.deepEqual(summary(readTar(archive)), FILES, format);
  }
});

Deno.test("readTar() rebuilds a path over 100 characters from a GNU long name or the ustar prefix", () => {
  assert.ok(LONG_PATH.length > 100 && LONG_PATH.length < 155 + 100);
  for (const [format, archive] of Object.entries(archives)) {
    const long = readTar(archive).find((e) => e.path.includes("long-file-name"));
    assert.equal(long?.path, LONG_PATH, format);
  }
  // The two formats really take different routes: only the GNU archive has a long-name entry.
  const text = (bytes: Uint8Array) => new TextDecoder("latin1").decode(bytes);
  assert.ok(text(archives.gnu!).includes("././@LongLink"));
  assert.ok(!text(archives.ustar!).includes("././@LongLink"));
});

Deno.test("readTar() skips directories and symlinks and keeps empty files", () => {
  const paths = readTar(archives.gnu!).map((e) => e.path);
  assert.ok(!paths.some((p) => p.includes("empty-dir") || p.includes("link-to-data")), `${paths}`);
  assert.equal(readTar(archives.gnu!).find((e) => e.path.endsWith("empty.txt"))?.bytes.length, 0);
});

Deno.test("readTar() reads an npm-style .tgz after gunzip", async () => {
  const tgz = await tar(tree, ["-cz"], "out.tgz");
  assert.deepEqual(summary(readTar(await gunzip(tgz))), FILES);
});

Deno.test("readTar() returns no entries for an empty archive (only the end-of-archive blocks)", () => {
  assert.deepEqual(readTar(new Uint8Array(1024)), []);
});

/** Offset of the header whose name field starts with `name`. */
function headerOffset(archive: Uint8Array, name: string): number {
  const wanted = new TextEncoder().encode(name);
  for (let at = 0; at + 512 <= archive.length; at += 512) {
    if (wanted.every((b, i) => archive[at + i] === b)) return at;
  }
  throw new Error(`no header named ${name}`);
}

Deno.test("readTar() rejects an archive cut inside a file's content, naming the entry", () => {
  const archive = archives.ustar!;
  const at = headerOffset(archive, "package/data.bin");
  for (const cut of [at + 512, at + 512 + 999]) {
    assert.throws(
      () => readTar(archive.subarray(0, cut)),
      /Corrupt tar archive: entry "package\/data.bin" runs past the end of the archive/,
      `cut at ${cut}`,
    );
  }
});

Deno.test("readTar() rejects an archive cut inside a GNU long-name entry", () => {
  const archive = archives.gnu!;
  const at = headerOffset(archive, "././@LongLink");
  assert.throws(
    () => readTar(archive.subarray(0, at + 512 + 10)),
    /entry "\.\/\.\/@LongLink" runs past the end/,
  );
});

Deno.test("readTar() rejects a header whose checksum does not match, naming its offset", () => {
  const archive = archives.ustar!;
  const at = headerOffset(archive, "package/empty.txt");
  const corrupt = archive.slice();
  corrupt[at + 8] = corrupt[at + 8]! ^ 0x01; // one bit of the name
  assert.throws(
    () => readTar(corrupt),
    new RegExp(`Corrupt tar archive: header checksum mismatch at byte ${at}$`),
  );
  const first = archive.slice();
  first[0] = 0x41; // the first header
  assert.throws(() => readTar(first), /header checksum mismatch at byte 0$/);
});

/** Sets a header field and recomputes the checksum, so only the field is wrong. */
function withField(archive: Uint8Array, at: number, field: number, text: string): Uint8Array {
  const out = archive.slice();
  out.set(new TextEncoder().encode(text), at + field);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : out[at + i]!;
  out.set(new TextEncoder().encode(sum.toString(8).padStart(6, "0") + "\0 "), at + 148);
  return out;
}

Deno.test("readTar() rejects a size field that is not octal", () => {
  const archive = archives.ustar!;
  const at = headerOffset(archive, "package/data.bin");
  assert.doesNotThrow(() => readTar(withField(archive, at, 124, "00000001750\0"))); // 1000, as is
  assert.throws(
    () => readTar(withField(archive, at, 124, "0000000175x\0")),
    new RegExp(`Corrupt tar archive: bad size field at byte ${at}`),
  );
});

Deno.test("readTar() rejects a size that claims more content than the archive holds", () => {
  const archive = archives.ustar!;
  const at = headerOffset(archive, "package/data.bin");
  assert.throws(
    () => readTar(withField(archive, at, 124, "77777777777\0")),
    /entry "package\/data.bin" runs past the end/,
  );
});

Deno.test({
  name: "readTar() rejects an archive cut inside a header",
  fn: () => {
    const archive = archives.ustar!;
    const at = headerOffset(archive, "package/empty.txt");
    assert.throws(() => readTar(archive.subarray(0, at + 100)), /Corrupt tar archive/);
  },
});

Deno.test({
  name: "readTar() takes a long path from a pax header",
  fn: async () => {
    const pax = await tar(tree, ["--format=pax", "-c"], "pax.tar");
    assert.deepEqual(summary(readTar(pax)), FILES);
  },
});

Deno.test("readTar() reads non-ASCII long names from pax and GNU archives (pax lengths count bytes)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ipintel-tar-utf8-" });
  try {
    // Over 100 bytes and full of multi-byte characters: pax records it, GNU a long link.
    const path = `package/${"Zürich-東京-".repeat(8)}/données-ü.txt`;
    await Deno.mkdir(`${dir}/${path.slice(0, path.lastIndexOf("/"))}`, { recursive: true });
    await Deno.writeTextFile(`${dir}/${path}`, "grüße\n");
    for (const format of ["pax", "gnu"]) {
      const entries = readTar(await tar(dir, [`--format=${format}`, "-c"], `${format}.tar`));
      assert.deepEqual(entries.map((e) => e.path), [path], format);
      assert.equal(new TextDecoder().decode(entries[0]!.bytes), "grüße\n", format);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
