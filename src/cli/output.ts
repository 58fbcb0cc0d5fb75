/** Prints a result either as JSON (`--json`) or as `key: value` lines for people. */
export function print(json: boolean, value: Record<string, unknown>): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(value)}\n`);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    process.stdout.write(`${k}: ${Array.isArray(v) ? v.join(',') : v === null ? '-' : String(v)}\n`);
  }
}
