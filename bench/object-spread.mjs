/**
 * What an object spread costs on this Node, by the shapes the request and ingest paths
 * build: a spread followed by a property the source lacks (`{ ...query, types }`) against
 * the same object written as a literal, and the shapes that stay cheap (a plain clone, a
 * spread that only overrides, a spread into a literal's own properties, Object.assign).
 *
 *   node bench/object-spread.mjs [--rounds 2] [--n 2000]
 *
 * Prints nanoseconds per object built, per round; the ratio of each shape to the literal
 * is what counts (absolute figures drift with the machine's load).
 */
import { benchArgs, positiveInteger } from '../dist/bench/cli-args.js';

const USAGE = `usage: node bench/object-spread.mjs [--rounds 2] [--n 2000]
  --rounds N   rounds of every shape (2)
  --n N        objects built per measurement (2000)`;

const { values } = benchArgs(USAGE, {
  options: { rounds: { type: 'string', default: '2' }, n: { type: 'string', default: '2000' } },
});
const rounds = positiveInteger('rounds', values.rounds, USAGE);
const n = positiveInteger('n', values.n, USAGE);
const sources = Array.from({ length: n }, (_, i) => ({ name: `tt_${i % 10}`, text: 'SELECT 1' }));
const types = { getTypeParser: () => String };

const shapes = {
  'literal { name, text, values }': () => sources.map((s) => ({ name: s.name, text: s.text, values: [1] })),
  'spread, then a new property': () => sources.map((s) => ({ ...s, values: [1] })),
  'spread, then two new properties': () => sources.map((s) => ({ ...s, values: [1], types })),
  'clone, then assign a new property': () =>
    sources.map((s) => {
      const o = { ...s };
      o.values = [1];
      return o;
    }),
  'spread, then an existing property': () => sources.map((s) => ({ ...s, text: 'SELECT 2' })),
  'a plain clone': () => sources.map((s) => ({ ...s })),
  'a property, then the spread': () => sources.map((s) => ({ values: [1], ...s })),
  'Object.assign({}, s, { values })': () => sources.map((s) => Object.assign({}, s, { values: [1] })),
};

let sink = 0;
const measure = (build) => {
  for (let i = 0; i < 50; i++) sink += build().length;
  const runs = 500;
  const started = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) sink += build().length;
  return Number(process.hrtime.bigint() - started) / (runs * n);
};

console.log(`node ${process.version}, ${n} objects a run, ${rounds} round(s)`);
for (let r = 1; r <= rounds; r++) {
  const literal = measure(shapes['literal { name, text, values }']);
  for (const [name, build] of Object.entries(shapes)) {
    const ns = name.startsWith('literal') ? literal : measure(build);
    console.log(
      `round ${r}  ${name.padEnd(36)} ${ns.toFixed(1).padStart(8)} ns  ${(ns / literal).toFixed(1).padStart(6)} x the literal`,
    );
  }
}
if (sink === 0) console.log('');
