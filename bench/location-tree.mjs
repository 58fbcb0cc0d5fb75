#!/usr/bin/env node
/**
 * The web app's location tree at 10,000 locations in one organization.
 *
 *   npm run bench:tree                       # embedded PostgreSQL in a temporary directory
 *   BENCH_DATABASE_URL=postgres://… npm run bench:tree   # any server (a fresh database is made on it)
 *
 * Seeds 100 roots with 99 children each (10,000 live locations) and one asset per room,
 * then times, through the whole service (app.inject with a web session), what the
 * locations page asks for: a page of roots, a page of one root's children, a tree search
 * by name, a search by key prefix, and a location's details (path and descendant count).
 * Prints the median and the best of BENCH_ROUNDS (default 20) per request. The database
 * is dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { benchArgs } from '../dist/bench/cli-args.js';
import { adminQuery, benchPostgres } from '../dist/bench/harness.js';
import { buildServer } from '../dist/src/app.js';
import { migrate } from '../dist/src/db/migrate.js';
import { createDatabase } from '../dist/src/db/pool.js';
import { MemoryRateLimitStore } from '../dist/src/http/rate-limit/memory-store.js';
import { SecretBox } from '../dist/src/secrets/secret-box.js';
import { createServices } from '../dist/src/services.js';

benchArgs(
  `usage: npm run bench:tree   (no options)
env: BENCH_DATABASE_URL (a PostgreSQL server instead of the embedded one), BENCH_ROUNDS (20)`,
  { options: {} },
);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);

async function main() {
  const server = await benchPostgres(process.env.BENCH_DATABASE_URL);
  const name = `tagtrail_bench_${randomBytes(4).toString('hex')}`;
  await adminQuery(server.adminUrl, `CREATE DATABASE ${name}`);
  const db = createDatabase(server.urlFor(name), { max: 4 });
  let app;
  let services;
  try {
    await migrate(db.pool);
    const org = (await db.pool.query("INSERT INTO organizations (name) VALUES ('Tree') RETURNING id")).rows[0]
      .id;
    await db.pool.query(
      `INSERT INTO locations (org_id, external_key, name)
       SELECT $1, 'R-' || lpad(r::text, 3, '0'), 'Building ' || lpad(r::text, 3, '0') FROM generate_series(1, 100) r`,
      [org],
    );
    await db.pool.query(
      `INSERT INTO locations (org_id, external_key, name, parent_id)
       SELECT $1, p.external_key || '-' || lpad(c::text, 2, '0'), 'Room ' || p.external_key || '-' || c, p.id
       FROM locations p CROSS JOIN generate_series(1, 99) c WHERE p.org_id = $1`,
      [org],
    );
    await db.pool.query(
      `WITH a AS (
         INSERT INTO assets (org_id, external_key, name)
         SELECT $1, 'A-' || l.id, 'Asset ' || l.id FROM locations l WHERE l.org_id = $1 AND l.parent_id IS NOT NULL
         RETURNING id, external_key)
       INSERT INTO asset_positions (org_id, asset_id, location_id) SELECT $1, id, substr(external_key, 3)::bigint FROM a`,
      [org],
    );
    await db.pool.query('ANALYZE locations');
    await db.pool.query('ANALYZE assets');
    await db.pool.query('ANALYZE asset_positions');
    const count = (await db.pool.query('SELECT count(*)::int AS n FROM locations WHERE org_id = $1', [org]))
      .rows[0].n;

    services = await createServices(
      db,
      {
        TAGTRAIL_ENV: 'production',
        secrets: new SecretBox([randomBytes(32)]),
        REDIS_URL: undefined,
        TAGTRAIL_RATE_LIMIT: 1_000_000,
        TAGTRAIL_RATE_WINDOW_SECONDS: 60,
        // One session sends every round: BENCH_ROUNDS beyond ~500 would meet the default.
        TAGTRAIL_SESSION_RATE_LIMIT: 1_000_000,
      },
      new MemoryRateLimitStore({ limit: 1_000_000, windowSeconds: 60 }),
    );
    app = await buildServer(services, { bodyLimit: 1048576 });
    await app.ready();
    const user = await services.internal.accounts.operatorUser(org);
    const session = await services.internal.sessions.create(org, user.id);
    const cookie = `tagtrail_session=${session.token}`;
    const root = (
      await db.pool.query("SELECT id FROM locations WHERE org_id = $1 AND external_key = 'R-042'", [org])
    ).rows[0].id;
    const room = (
      await db.pool.query("SELECT id FROM locations WHERE org_id = $1 AND external_key = 'R-042-57'", [org])
    ).rows[0].id;

    const cases = [
      ['roots, first page of 50', '/internal/locations/tree?limit=50'],
      ['roots, second page', '/internal/locations/tree?limit=50&offset=50'],
      ['children of one root (99), page of 50', `/internal/locations/tree?parent_id=${root}&limit=50`],
      ['search by name "room r-042"', '/internal/locations/tree/search?q=room%20r-042&limit=50'],
      ['search by key "-57"', '/internal/locations/tree/search?q=-57&limit=50'],
      ['details (path, descendant count) of a root', `/internal/locations/${root}`],
      ['details of a room', `/internal/locations/${room}`],
    ];
    console.log(`${count} locations, ${ROUNDS} rounds per request (median / best, ms, through app.inject)`);
    for (const [label, url] of cases) {
      const times = [];
      for (let i = 0; i < ROUNDS; i++) {
        const started = process.hrtime.bigint();
        const res = await app.inject({ method: 'GET', url, headers: { cookie } });
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      }
      times.sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)];
      console.log(`${label.padEnd(46)} ${median.toFixed(1).padStart(7)} / ${times[0].toFixed(1)}`);
    }
  } finally {
    await app?.close();
    await services?.close();
    await db.close();
    await adminQuery(server.adminUrl, `DROP DATABASE ${name}`);
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
