/** External checkers for the format tests: xmllint and Python, fed through stdin. */

/** Output of one external run. */
export interface ToolRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function installed(command: string, args: string[]): boolean {
  try {
    return new Deno.Command(command, { args, stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

/** Whether libxml2's xmllint can be run. */
export const HAS_XMLLINT = installed("xmllint", ["--version"]);
/** Whether python3 can be run. */
export const HAS_PYTHON = installed("python3", ["--version"]);

/** Why a test that needs xmllint is ignored (in its name), or null. */
export const NO_XMLLINT = HAS_XMLLINT ? null : "xmllint not installed";
/** Why a test that needs python3 is ignored (in its name), or null. */
export const NO_PYTHON = HAS_PYTHON ? null : "python3 not installed";

/** Runs a command with `input` (UTF-8) on stdin. */
export async function runWithInput(
  command: string,
  args: string[],
  input: string,
): Promise<ToolRun> {
  const child = new Deno.Command(command, {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

/** `xmllint --noout -`: exit code 0 and no output when the document is well-formed. */
export function xmllint(xml: string): Promise<ToolRun> {
  return runWithInput("xmllint", ["--noout", "-"], xml);
}

const PY_CSV = `
import csv, io, json, sys
text = sys.stdin.buffer.read().decode("utf-8")
rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
sys.stdout.write(json.dumps(rows))
`;

/** Parses CSV with Python's csv module; returns the rows (header first). */
export async function pythonCsv(csv: string): Promise<string[][]> {
  const run = await runWithInput("python3", ["-c", PY_CSV], csv);
  if (run.code !== 0) throw new Error(`python csv failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

const PY_XML = `
import json, sys
import xml.etree.ElementTree as ET
root = ET.fromstring(sys.stdin.buffer.read())
def conv(e):
    kids = list(e)
    if not kids:
        return e.text or ""
    if e.tag == "responseArray":
        return [conv(k) for k in kids if k.tag == "item"]
    return {k.tag: conv(k) for k in kids}
sys.stdout.write(json.dumps({root.tag: conv(root)}))
`;

/** Parses XML with Python's ElementTree; leaves as text, `responseArray` items as a list. */
export async function pythonXml(xml: string): Promise<unknown> {
  const run = await runWithInput("python3", ["-c", PY_XML], xml);
  if (run.code !== 0) throw new Error(`python xml failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}
