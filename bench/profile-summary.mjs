#!/usr/bin/env node
/**
 * Where a CPU profile of bench/api.mjs (`--profile <dir>`) spent its time.
 *
 *   node bench/profile-summary.mjs <file.cpuprofile> [--top 40] [--per 1234] [--match text]
 *   node bench/profile-summary.mjs <a.cpuprofile> --per 14700 --base <b.cpuprofile> --base-per 19400
 *   node bench/profile-summary.mjs <file.cpuprofile> --from 1186207728 --to 1189709043 --per 100000
 *
 * Prints self time by function and by package or source file, and total (inclusive) time
 * of the functions whose name or file contains `--match`. With `--per n` (the requests the
 * load made), times are also given in microseconds per request. With `--base` (another
 * profile, e.g. the baseline's of the same case) and both request counts, the functions
 * whose self time per request differs most between the two come first. With `--from` and
 * `--to` (microseconds in the profile's clock, as bench:ingest prints its measured window),
 * only the samples taken in between count.
 */
import { readFileSync } from 'node:fs';
import { benchArgs, usageError } from '../dist/bench/cli-args.js';

const USAGE = `usage: node bench/profile-summary.mjs <file.cpuprofile> [options]
  --top N          functions and places listed (40)
  --per N          the requests (or reads) the load made: microseconds per unit too
  --match TEXT     total time of the functions whose name or file contains TEXT (repeatable)
  --callers TEXT   who calls the functions matching TEXT (repeatable)
  --base FILE      another profile (the baseline's): the functions differing most come first
  --base-per N     the requests of --base's load (with --per)
  --from US        only samples from this instant (microseconds, the profile's clock)
  --to US          only samples up to this instant`;

const { values: args, positionals } = benchArgs(USAGE, {
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '40' },
    per: { type: 'string' },
    match: { type: 'string', multiple: true },
    callers: { type: 'string', multiple: true },
    base: { type: 'string' },
    'base-per': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
  },
});
if (positionals.length !== 1) usageError('one .cpuprofile file, please', USAGE);
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const TOP = Number(args.top);
const per = args.per ? Number(args.per) : undefined;

/** Self time per node from the samples and their time deltas (microseconds). */
function selfTimes(p) {
  const self = new Map();
  const from = args.from ? Number(args.from) : Number.NEGATIVE_INFINITY;
  const to = args.to ? Number(args.to) : Number.POSITIVE_INFINITY;
  let at = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    at += p.timeDeltas[i] ?? 0;
    if (at < from || at > to) continue;
    const id = p.samples[i];
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  return self;
}
const isIdle = (frame) => ['(idle)', '(program)'].includes(frame.functionName);

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = selfTimes(profile);
const totalUs = [...self.values()].reduce((a, b) => a + b, 0);
const idleIds = new Set(profile.nodes.filter((n) => isIdle(n.callFrame)).map((n) => n.id));
const idleUs = [...idleIds].reduce((a, id) => a + (self.get(id) ?? 0), 0);
const busyUs = totalUs - idleUs;

function where(frame) {
  const url = frame.url || '';
  const nm = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (nm) return nm[1];
  if (url.startsWith('node:')) return url;
  const dist = url.match(/\/(dist\/[^?]+|bench\/[^?]+)/);
  if (dist) return dist[1];
  return url || '(native)';
}
const label = (frame) => `${frame.functionName || '(anonymous)'} ${where(frame)}:${frame.lineNumber + 1}`;

const fmt = (us) => {
  const pct = ((us / busyUs) * 100).toFixed(1).padStart(5);
  return `${pct}% ${(us / 1000).toFixed(0).padStart(6)} ms${per ? ` ${(us / per).toFixed(1).padStart(6)} us/req` : ''}`;
};
const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${fmt(us)}  ${k}`);
};

console.log(
  `profile: ${(totalUs / 1000).toFixed(0)} ms sampled, busy ${(busyUs / 1000).toFixed(0)} ms (idle and program ${(idleUs / 1000).toFixed(0)} ms)`,
);
const byFn = new Map();
const byWhere = new Map();
for (const [id, us] of self) {
  if (idleIds.has(id)) continue;
  const frame = nodes.get(id).callFrame;
  byFn.set(label(frame), (byFn.get(label(frame)) ?? 0) + us);
  byWhere.set(where(frame), (byWhere.get(where(frame)) ?? 0) + us);
}
print('self time by function', byFn);
print('self time by package or file', byWhere);

for (const text of args.match ?? []) {
  // Inclusive: each sample counted once for every distinct matching frame on its stack.
  const inclusive = new Map();
  for (const [id, us] of self) {
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const frame = nodes.get(n).callFrame;
      const key = label(frame);
      if (!seen.has(key) && key.includes(text)) {
        seen.add(key);
        inclusive.set(key, (inclusive.get(key) ?? 0) + us);
      }
    }
  }
  print(`total time of frames matching "${text}"`, inclusive);
}

// `--callers text`: for self time in frames matching `text`, the call paths that led there
// (the nearest few frames above, outside Node's internals).
for (const text of args.callers ?? []) {
  const paths = new Map();
  for (const [id, us] of self) {
    if (!label(nodes.get(id).callFrame).includes(text)) continue;
    const chain = [];
    for (let n = parent.get(id); n !== undefined && chain.length < 5; n = parent.get(n)) {
      const frame = nodes.get(n).callFrame;
      if (frame.url.startsWith('node:') || !frame.url) continue;
      chain.push(label(frame));
    }
    const key = chain.join(' < ');
    paths.set(key, (paths.get(key) ?? 0) + us);
  }
  print(`callers of "${text}"`, paths);
}

// `--base`: self time per request by function, this profile against another.
if (args.base) {
  if (!per || !args['base-per']) usageError('--base needs --per and --base-per', USAGE);
  const other = JSON.parse(readFileSync(args.base, 'utf8'));
  const otherNodes = new Map(other.nodes.map((n) => [n.id, n]));
  const otherFn = new Map();
  for (const [id, us] of selfTimes(other)) {
    const frame = otherNodes.get(id).callFrame;
    if (!isIdle(frame)) otherFn.set(label(frame), (otherFn.get(label(frame)) ?? 0) + us);
  }
  const basePer = Number(args['base-per']);
  const rows = [...new Set([...byFn.keys(), ...otherFn.keys()])].map((k) => [
    k,
    (byFn.get(k) ?? 0) / per,
    (otherFn.get(k) ?? 0) / basePer,
  ]);
  const sum = (i) => rows.reduce((a, r) => a + r[i], 0);
  console.log(
    `\nself time per request against ${args.base}: ${sum(1).toFixed(0)} us here, ${sum(2).toFixed(0)} us there`,
  );
  console.log('   diff    here   there  function');
  for (const [k, a, b] of rows.sort((x, y) => y[1] - y[2] - (x[1] - x[2])).slice(0, TOP)) {
    console.log(
      `${(a - b).toFixed(1).padStart(7)} ${a.toFixed(1).padStart(7)} ${b.toFixed(1).padStart(7)}  ${k}`,
    );
  }
}
