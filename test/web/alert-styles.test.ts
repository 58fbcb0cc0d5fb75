import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A message box's kind is only seen through its style: `alert-warning` was used by the
 * restored-draft, conflict and 2FA notices without a rule, so they showed as plain boxes.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );

describe('message box styles', () => {
  it('every alert-* kind the web app uses has a rule in its style sheets', () => {
    const css = filesUnder(join(ROOT, 'web/public/styles'))
      .filter((f) => f.endsWith('.css'))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const styled = new Set([...css.matchAll(/\.(alert-[\w-]+)\s*[{,]/g)].map((m) => m[1]));
    const used = new Set<string>();
    for (const file of filesUnder(join(ROOT, 'web/src')).filter((f) => /\.tsx?$/.test(f))) {
      for (const m of readFileSync(file, 'utf8').matchAll(/\balert-[a-z][\w-]*/g)) used.add(m[0]);
    }
    expect(used.size).toBeGreaterThan(0);
    expect([...used].filter((kind) => !styled.has(kind))).toEqual([]);
  });
});
