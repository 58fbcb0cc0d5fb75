#!/usr/bin/env node
// `npm start`'s prestart: compile only when the sources changed since the last build, so a
// restart does not spend ~20 s in tsc. The fingerprint is every compiled input's path,
// size and modification time (an added, edited or deleted file changes it); it is written
// to dist/.build-stamp after a successful build. A fresh clone has no stamp and builds.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(root, 'dist', '.build-stamp');
const INPUT_DIRS = ['src', 'bench', 'web/src'];
const INPUT_FILES = [
  'tsconfig.json',
  'tsconfig.build.json',
  'web/tsconfig.json',
  'package.json',
  'package-lock.json',
];

function walk(dir, out) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else out.push(path);
  }
}

function fingerprint() {
  const files = INPUT_FILES.map((f) => join(root, f)).filter((f) => existsSync(f));
  for (const dir of INPUT_DIRS) walk(join(root, dir), files);
  const hash = createHash('sha256');
  for (const file of files.sort()) {
    const s = statSync(file);
    hash.update(`${file.slice(root.length)}\0${s.size}\0${s.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

// `npm run build` by hand counts as a build too: its prebuild notes the fingerprint
// (`--pending`), taken before compiling as below, and its postbuild makes that the stamp
// (`--built`) once tsc succeeded. Without them a start after `npm run build` compiled again.
const PENDING = `${STAMP}.pending`;
if (process.argv[2] === '--pending') {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(PENDING, `${fingerprint()}\n`);
  process.exit(0);
}
if (process.argv[2] === '--built') {
  if (existsSync(PENDING)) renameSync(PENDING, STAMP);
  process.exit(0);
}

const current = fingerprint();
const built =
  existsSync(join(root, 'dist', 'src', 'cli', 'main.js')) &&
  existsSync(join(root, 'dist', 'web')) &&
  existsSync(STAMP) &&
  readFileSync(STAMP, 'utf8').trim() === current;

if (built) {
  process.stderr.write('build: sources unchanged since the last build, not compiling\n');
} else {
  const result = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  // The fingerprint taken before compiling: a file edited during the build rebuilds next time.
  writeFileSync(STAMP, `${current}\n`);
}
