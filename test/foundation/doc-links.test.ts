import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Relative link targets of a Markdown file, without their #fragment; code blocks skipped. */
function relativeLinks(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  const targets = [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
  return targets
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'))
    .map((t) => t.split('#')[0] ?? t);
}

describe('documentation links', () => {
  it.each(documents)('every relative link in %s points at a file in the repository', (document) => {
    const text = readFileSync(join(root, document), 'utf8');
    const broken = relativeLinks(text).filter((target) => {
      const path = resolve(dirname(join(root, document)), target);
      return !path.startsWith(`${root}/`) || !existsSync(path);
    });
    expect(broken).toEqual([]);
  });

  it('the README lists each document once', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const listed = [...readme.matchAll(/^- \[(docs\/[^\]]+)\]/gm)].map((m) => m[1]);
    expect(listed.length).toBeGreaterThan(0);
    expect(new Set(listed).size).toBe(listed.length);
  });
});
