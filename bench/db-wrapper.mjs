#!/usr/bin/env node
import { readFileSync } from 'node:fs';
/**
 * The transaction wrapper alone, two builds side by side in one process on one database:
 * `concurrency` callers loop on one read (GET /orgs/me's query through `readWithOrg`, or
 * GET /assets/{id}'s through AssetService.get) for `duration` seconds, the builds alternated
 * `rounds` times. Prints op/s, CPU per op of this process and of PostgreSQL, socket writes
 * per op and messages (client.query calls, each answered on its own) per op; the last two
 * are counts, unmoved by the load of other work on the machine.
 *
 *   node bench/db-wrapper.mjs --a /path/to/other/checkout --b . [--what me|get] [--duration 3]
 *
 * Each path is a checkout with a compiled dist/ (npx tsc -p tsconfig.build.json).
 */
import net from 'node:net';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { benchArgs } from '../dist/bench/cli-args.js';
import { cpuClock } from './api-measure.mjs';

const USAGE = `usage: node bench/db-wrapper.mjs --a <checkout> [--b <checkout>] [options]
  --a DIR           a checkout with a compiled dist/
  --b DIR           the other (.)
  --what W          me (GET /orgs/me's query) or get (GET /assets/{id}'s) (me)
  --duration S      seconds of each build's loop per round (3)
  --concurrency N   callers looping at once (50)
  --rounds N        rounds, the builds alternated (3)`;

const { values: args } = benchArgs(USAGE, {
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: '.' },
    what: { type: 'string', default: 'me' },
    duration: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
  },
});

let writes = 0;
// Statements sent: each client.query is one message with its own Sync, one answer to wait for.
let queries = 0;
const pgQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(...rest) {
  queries++;
  return pgQuery.apply(this, rest);
};
for (const method of ['_write', '_writev']) {
  const original = net.Socket.prototype[method];
  net.Socket.prototype[method] = function counted(...rest) {
    writes++;
    return original.apply(this, rest);
  };
}

const dist = (root, path) => import(join(resolve(root), 'dist', path));
const builds = [];
for (const [label, root] of [
  ['a', args.a],
  ['b', args.b],
]) {
  if (!root) continue;
  builds.push({
    label: `${label} (${root})`,
    pool: await dist(root, 'src/db/pool.js'),
    assets: await dist(root, 'src/assets/service.js'),
    orgs: await dist(root, 'src/accounts/service.js'),
  });
}
const { benchPostgres, adminQuery } = await dist(args.b, 'bench/harness.js');
const { migrate } = await dist(args.b, 'src/db/migrate.js');

const server = await benchPostgres(process.env.BENCH_DATABASE_URL);
const name = `tagtrail_wrapper_${process.pid}`;
await adminQuery(server.adminUrl, `CREATE DATABASE ${name}`);
const url = server.urlFor(name);
const cpuNow = cpuClock(
  server.dataDir
    ? Number(readFileSync(join(server.dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0])
    : undefined,
);
try {
  const setup = builds[0].pool.createDatabase(url);
  await migrate(setup.pool);
  const orgId = (await setup.pool.query("INSERT INTO organizations (name) VALUES ('Bench') RETURNING id"))
    .rows[0].id;
  await setup.pool.query(
    `INSERT INTO assets (org_id, external_key, name) SELECT $1, 'A-' || g, 'Asset ' || g FROM generate_series(1, 1000) g`,
    [orgId],
  );
  await setup.close();
  const ids = (n) => 1 + Math.floor(Math.random() * n);

  for (let round = 1; round <= Number(args.rounds); round++) {
    for (const build of builds) {
      const db = build.pool.createDatabase(url, { max: 20 });
      const op =
        args.what === 'get'
          ? (
              (s) => () =>
                s.get(orgId, ids(1000))
            )(new build.assets.AssetService(db))
          : (
              (s) => () =>
                s.get(orgId)
            )(new build.orgs.OrganizationService(db));
      // Warm-up: connections open, the JIT compiles.
      let stop = Date.now() + 1000;
      const loop = async () => {
        let n = 0;
        while (Date.now() < stop) {
          await op();
          n++;
        }
        return n;
      };
      await Promise.all(Array.from({ length: Number(args.concurrency) }, loop));
      stop = Date.now() + Number(args.duration) * 1000;
      const before = cpuNow();
      const writesBefore = writes;
      const queriesBefore = queries;
      const counts = await Promise.all(Array.from({ length: Number(args.concurrency) }, loop));
      const after = cpuNow();
      const ops = counts.reduce((x, y) => x + y, 0);
      const node = (after.node - before.node) / ops;
      const pgMs = before.pg === undefined ? undefined : (after.pg - before.pg) / ops;
      console.log(
        `round ${round} ${build.label.padEnd(40)} ${(ops / Number(args.duration)).toFixed(0).padStart(6)} op/s ` +
          `cpu ${(node + (pgMs ?? 0)).toFixed(3)} ms/op (node ${node.toFixed(3)}${pgMs === undefined ? '' : ` pg ${pgMs.toFixed(3)}`}) ` +
          `writes ${((writes - writesBefore) / ops).toFixed(2)}/op queries ${((queries - queriesBefore) / ops).toFixed(2)}/op  load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
      );
      await db.close();
    }
  }
} finally {
  await adminQuery(server.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await server.stop();
}
