import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * axe-core from npm, injected into the page under test (no network: the script comes from
 * node_modules). Runs the default rules plus the experimental `label-content-name-mismatch`
 * (a visible label missing from an accessible name, which screen-reader and voice users
 * trip over), and returns the serious and critical violations, one line each.
 */

const require = createRequire(import.meta.url);
let source: Promise<string> | undefined;

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[];
}

export async function seriousAxeViolations(page: Page): Promise<string[]> {
  source ??= readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
  const script = await source;
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(script);
  const result = (await page.evaluate(`window.axe.run(document, {
    resultTypes: ['violations'],
    rules: { 'label-content-name-mismatch': { enabled: true } },
  })`)) as AxeResult;
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes
          .slice(0, 3)
          .map((n) => JSON.stringify(n.target))
          .join(', ')}`,
    );
}
