/**
 * Bytes allocated by function and by package or source file, from a sampling heap profile
 * (bench:ingest's BENCH_HEAP_PROFILE, or any .heapprofile).
 *
 *   node bench/heap-summary.mjs <file.heapprofile> [--top 30] [--per 30000]
 *
 * With `--per n` (the reads or requests of the window) the bytes are also given per unit.
 */
import { readFileSync } from 'node:fs';
import { benchArgs, usageError } from '../dist/bench/cli-args.js';

const USAGE = `usage: node bench/heap-summary.mjs <file.heapprofile> [--top 30] [--per n]
  --top N   functions and places listed (30)
  --per N   the reads or requests of the window: bytes per unit too`;

const { values: args, positionals } = benchArgs(USAGE, {
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, per: { type: 'string' } },
});
if (positionals.length !== 1) usageError('one .heapprofile file, please', USAGE);
const TOP = Number(args.top);
const per = args.per ? Number(args.per) : undefined;
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));

/** The package of a script (node_modules/<name>), or the file itself, or (native). */
function place(url) {
  if (!url) return '(native)';
  const m = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (m) return m[1];
  const dist = url.indexOf('/dist/');
  return dist >= 0 ? url.slice(dist + 1) : url.replace(/^file:\/\//, '');
}

const byFunction = new Map();
const byPlace = new Map();
let total = 0;
(function walk(node) {
  const bytes = (node.selfSize ?? 0) || 0;
  if (bytes > 0) {
    const f = node.callFrame;
    const where = place(f.url);
    const key = `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + bytes);
    byPlace.set(where, (byPlace.get(where) ?? 0) + bytes);
    total += bytes;
  }
  for (const child of node.children ?? []) walk(child);
})(profile.head);

const mb = (b) => `${(b / 1048576).toFixed(1).padStart(7)} MB`;
const unit = (b) => (per ? `${(b / per / 1024).toFixed(2).padStart(6)} kB/unit` : '');
const line = (b, name) => `${((b / total) * 100).toFixed(1).padStart(5)}% ${mb(b)} ${unit(b)}  ${name}`;
process.stdout.write(
  `sampled ${mb(total).trim()} allocated${per ? `, ${unit(total).trim()}` : ''}\n\nby function\n`,
);
for (const [k, b] of [...byFunction].sort((a, z) => z[1] - a[1]).slice(0, TOP))
  process.stdout.write(`${line(b, k)}\n`);
process.stdout.write('\nby package or file\n');
for (const [k, b] of [...byPlace].sort((a, z) => z[1] - a[1]).slice(0, TOP))
  process.stdout.write(`${line(b, k)}\n`);
