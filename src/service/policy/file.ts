/**
 * The policy file (`IPINTEL_POLICY`): read and checked at start-up (a bad file
 * is a PolicyError, exit status 2), then watched so that an edited policy is
 * served without a restart. A bad new file is reported and refused; the
 * served policy stays (as with the TLS certificate, src/process/server/tls.ts).
 */

import { createHash } from "node:crypto";
import { parsePolicy, type Policy, PolicyError } from "./policy.ts";

/** A policy as served: its rules, where it came from and its version. */
export interface LoadedPolicy {
  policy: Policy;
  path: string;
  /** The first 12 hex digits of the file's SHA-256: what `/status` shows. */
  version: string;
  loadedAt: Date;
}

/** How often the file is read for a change. */
export const POLICY_POLL_MS = 1000;
/** A policy is a page of rules; anything this big is a mistake (a wrong path). */
export const MAX_POLICY_BYTES = 1 << 20;

/** Reads and checks the file; throws a PolicyError naming it and the problem. */
export async function readPolicyFile(
  path: string,
  now: () => Date = () => new Date(),
): Promise<LoadedPolicy> {
  return policyFromBytes(await readBytes(path), path, now());
}

/** Checks a file's bytes as read from `path`; throws a PolicyError. */
export function policyFromBytes(bytes: Uint8Array, path: string, loadedAt: Date): LoadedPolicy {
  const where = `IPINTEL_POLICY ${JSON.stringify(path)}`;
  let json: unknown;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    json = JSON.parse(text);
  } catch (error) {
    throw new PolicyError(`${where}: not valid JSON: ${(error as Error).message}`);
  }
  // JSON.parse keeps the last of two equal keys: `{"default":"allow","default":"deny"}` would
  // silently serve one of two rules the author wrote. Refused, naming the key and where.
  const duplicate = duplicateKey(text);
  if (duplicate) {
    throw new PolicyError(
      `${where}: duplicate key ${JSON.stringify(duplicate.key)} ${duplicate.where}: ` +
        "JSON keeps only the last one, so the file is refused; keep one",
    );
  }
  return { policy: parsePolicy(json, where), path, version: versionOf(bytes), loadedAt };
}

/** A key given twice in one object, and where that object is (`at the top level`, `in rule 2`). */
export interface DuplicateKey {
  key: string;
  where: string;
}

/**
 * The first key that appears twice in one object of `text` (valid JSON: it
 * has been parsed), keys compared as decoded (`"a"` and `"\u0061"` are one).
 * A small tokenizer with a stack of its own, so nesting of any depth is walked
 * without recursion.
 */
export function duplicateKey(text: string): DuplicateKey | null {
  /** An open object or array; `at` is its key or index in the one holding it. */
  type Frame =
    | {
      kind: "object";
      at: string | number | null;
      keys: Set<string>;
      key: string;
      expectKey: boolean;
    }
    | { kind: "array"; at: string | number | null; index: number };
  const stack: Frame[] = [];
  const position = (): string | number | null => {
    const top = stack[stack.length - 1];
    if (!top) return null;
    return top.kind === "object" ? top.key : top.index;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "{") {
      stack.push({ kind: "object", at: position(), keys: new Set(), key: "", expectKey: true });
    } else if (ch === "[") {
      stack.push({ kind: "array", at: position(), index: 0 });
    } else if (ch === "}" || ch === "]") {
      stack.pop();
    } else if (ch === ",") {
      const top = stack[stack.length - 1];
      if (top?.kind === "object") top.expectKey = true;
      else if (top?.kind === "array") top.index++;
    } else if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top?.kind === "object" && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) {
          const path = stack.slice(1).map((frame) => frame.at!);
          return { key, where: describePath(path) };
        }
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
      i = end;
    }
  }
  return null;
}

/** Where an object of the policy is, as the other messages name it. */
function describePath(path: readonly (string | number)[]): string {
  if (path.length === 0) return "at the top level";
  const [first, second, ...rest] = path;
  if (first === "rules" && typeof second === "number") {
    const rule = `in rule ${second + 1}`;
    return rest.length ? `${rule}, in ${rest.map((p) => JSON.stringify(p)).join(" → ")}` : rule;
  }
  return `in ${path.map((p) => JSON.stringify(p)).join(" → ")}`;
}

/** The version of a policy file's bytes. */
export function versionOf(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex").slice(0, 12);
}

/**
 * Reads the file every `intervalMs` (it is small; reading it finds an edit
 * that keeps its size and modification time too); when its content changed
 * and checks, calls `install` with the new policy. A bad or half-written file
 * is reported once per content and the served policy stays.
 */
export function watchPolicyFile(
  served: LoadedPolicy,
  install: (next: LoadedPolicy) => void,
  report: (message: string) => void,
  intervalMs = POLICY_POLL_MS,
): { close(): void } {
  let current = served;
  // The content last acted on (installed or refused): the same content is not reported twice.
  let seen = served.version;
  let busy = false;
  const poll = async () => {
    if (busy) return;
    busy = true;
    try {
      let bytes: Uint8Array | null = null;
      let key: string;
      let problem: string | null = null;
      try {
        bytes = await readBytes(current.path);
        key = versionOf(bytes);
      } catch (error) {
        problem = (error as Error).message;
        key = `unreadable: ${problem}`;
      }
      if (key === seen) return;
      seen = key;
      // Back to the served content (after a refused edit): nothing to load or say.
      if (key === current.version) return;
      if (bytes !== null) {
        try {
          current = policyFromBytes(bytes, current.path, new Date());
          install(current);
          report(
            `ipintel: policy reloaded from ${current.path} (version ${current.version}, ${current.policy.rules.length} rules)`,
          );
          return;
        } catch (error) {
          problem = (error as Error).message;
        }
      }
      report(
        `ipintel: policy file changed but not reloaded, still serving version ${current.version}: ${problem}`,
      );
    } finally {
      busy = false;
    }
  };
  // Polls on the clock's multiples of the interval (re-aimed each time, so no drift): a
  // server's isolates each watch the file, and reading it within the same milliseconds,
  // they switch together.
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  const next = () => {
    if (closed) return;
    timer = setTimeout(async () => {
      await poll();
      next();
    }, intervalMs - (Date.now() % intervalMs));
  };
  next();
  return {
    close: () => {
      closed = true;
      clearTimeout(timer);
    },
  };
}

/** What `/status` shows of the served policy. */
export function policyStatus(loaded: LoadedPolicy): {
  file: string;
  version: string;
  loadedAt: string;
  default: string;
  rules: number;
  cacheSeconds: number;
} {
  return {
    file: loaded.path,
    version: loaded.version,
    loadedAt: loaded.loadedAt.toISOString(),
    default: loaded.policy.default,
    rules: loaded.policy.rules.length,
    cacheSeconds: loaded.policy.cacheSeconds,
  };
}

async function readBytes(path: string): Promise<Uint8Array> {
  const where = `IPINTEL_POLICY ${JSON.stringify(path)}`;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (error) {
    throw new PolicyError(`Cannot read ${where}: ${(error as Error).message}`);
  }
  try {
    const info = await file.stat();
    if (!info.isFile) throw new PolicyError(`${where} is not a file`);
    if (info.size > MAX_POLICY_BYTES) {
      throw new PolicyError(
        `${where} is ${info.size} bytes: a policy is at most ${MAX_POLICY_BYTES}`,
      );
    }
    const bytes = new Uint8Array(info.size);
    let at = 0;
    while (at < bytes.length) {
      const n = await file.read(bytes.subarray(at));
      if (n === null) break;
      at += n;
    }
    return bytes.subarray(0, at);
  } finally {
    file.close();
  }
}
