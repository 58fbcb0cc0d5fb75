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

/** Links with a #fragment, the target file ('' for the same file) apart from the fragment. */
function fragmentLinks(text: string): { target: string; fragment: string }[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && t.includes('#'))
    .map((t) => {
      const at = t.indexOf('#');
      return { target: t.slice(0, at), fragment: decodeURIComponent(t.slice(at + 1)) };
    });
}

/**
 * The anchors GitHub gives a Markdown file's headings: the heading's text (a link's words,
 * code without its backticks) in lower case, without punctuation but `-` and `_`, spaces
 * as `-`; a repeated one gets `-1`, `-2`, … Explicit `<a id>` / `<a name>` anchors too.
 */
function headingSlugs(text: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  const prose = text.replace(/```[\s\S]*?```/g, '');
  for (const m of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const words = (m[1] ?? '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = words
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    slugs.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of prose.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) slugs.add(m[1] ?? '');
  return slugs;
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

  it.each(documents)('every #fragment of a link in %s names a heading of its target', (document) => {
    const text = readFileSync(join(root, document), 'utf8');
    const missing = fragmentLinks(text).filter(({ target, fragment }) => {
      const file = target === '' ? join(root, document) : resolve(dirname(join(root, document)), target);
      if (!file.endsWith('.md') || !existsSync(file)) return false;
      return !headingSlugs(readFileSync(file, 'utf8')).has(fragment);
    });
    expect(missing).toEqual([]);
  });

  it('the README lists each document once', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const listed = [...readme.matchAll(/^- \[(docs\/[^\]]+)\]/gm)].map((m) => m[1]);
    expect(listed.length).toBeGreaterThan(0);
    expect(new Set(listed).size).toBe(listed.length);
  });
});
