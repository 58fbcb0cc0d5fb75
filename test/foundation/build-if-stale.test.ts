import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/compiled.js';

/**
 * A scratch project holding scripts/build-if-stale.mjs, a `build` that only counts its runs
 * (in `builds`) and writes the file a start looks for, the given npm scripts around it, and
 * one source file. Removed after the suite.
 */
function scratchProject(prefix: string, scripts: Record<string, string | undefined>): string {
  const project = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(project, { recursive: true, force: true }));
  mkdirSync(join(project, 'scripts'));
  mkdirSync(join(project, 'src'));
  copyFileSync(join(ROOT, 'scripts/build-if-stale.mjs'), join(project, 'scripts/build-if-stale.mjs'));
  writeFileSync(
    join(project, 'fake-build.mjs'),
    "import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';\n" +
      "mkdirSync('dist/src/cli', { recursive: true }); mkdirSync('dist/web', { recursive: true });\n" +
      "writeFileSync('dist/src/cli/main.js', ''); appendFileSync('builds', 'x');\n",
  );
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ scripts: { ...scripts, build: 'node fake-build.mjs' } }),
  );
  writeFileSync(join(project, 'src/a.ts'), 'export const a = 1;\n');
  return project;
}

/**
 * `npm start`'s prestart (scripts/build-if-stale.mjs) in a scratch project whose `build`
 * script only counts its runs, so what triggers a build is checked without compiling.
 */
describe('prestart builds only when the sources changed', () => {
  const project = scratchProject('tagtrail-prestart-', {});

  const prestart = () => {
    execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: project, stdio: 'ignore' });
    return readFileSync(join(project, 'builds'), 'utf8').length;
  };

  it('builds a fresh checkout, skips an unchanged one, rebuilds after an edit, an addition or a deletion', () => {
    expect(prestart()).toBe(1);
    expect(prestart()).toBe(1);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(project, 'src/a.ts'), later, later);
    expect(prestart()).toBe(2);
    writeFileSync(join(project, 'src/b.ts'), 'export const b = 2;\n');
    expect(prestart()).toBe(3);
    rmSync(join(project, 'src/b.ts'));
    expect(prestart()).toBe(4);
    expect(prestart()).toBe(4);
    rmSync(join(project, 'dist'), { recursive: true });
    expect(prestart()).toBe(5);
  }, 120_000);
});

/**
 * `npm run build` by hand (what a checkout is told to run before starting) is a build too:
 * the project's prebuild and postbuild record it, so the `npm start` after it does not
 * compile the unchanged sources again (README, Quick start). The scratch project takes those
 * two scripts from the real package.json, with the counting build between them.
 */
describe('a build by hand counts as the last build', () => {
  const real = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const project = scratchProject('tagtrail-build-by-hand-', {
    prebuild: real.scripts.prebuild,
    postbuild: real.scripts.postbuild,
  });

  const builds = () => readFileSync(join(project, 'builds'), 'utf8').length;
  const buildByHand = () => execFileSync('npm', ['run', 'build'], { cwd: project, stdio: 'ignore' });
  const prestart = () =>
    execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: project, stdio: 'ignore' });

  it('starts without compiling after npm run build, and compiles once a source changed since', () => {
    buildByHand();
    expect(builds()).toBe(1);
    prestart();
    expect(builds()).toBe(1);
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(project, 'src/a.ts'), later, later);
    prestart();
    expect(builds()).toBe(2);
  }, 120_000);
});
