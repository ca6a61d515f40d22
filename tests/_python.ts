/** Finds a Python for a cross-check: the one on PATH, else Debian's (where apt installs packages). */
export async function pythonWith(importLine: string): Promise<string | null> {
  for (const python of ["python3", "/usr/bin/python3"]) {
    try {
      const { success } = await new Deno.Command(python, {
        args: ["-c", importLine],
        stdout: "null",
        stderr: "null",
      }).output();
      if (success) return python;
    } catch {
      // not installed
    }
  }
  return null;
}
