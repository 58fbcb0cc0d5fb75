#!/usr/bin/env node
/**
 * What PostgreSQL charges for the rows a move writes, against bare tables (issue 12).
 *
 *   npm run bench:moves                               # 10,000 assets, 10 rounds, embedded PostgreSQL
 *   npm run bench:moves -- --assets 50000 --rounds 5 --batch 2500
 *   BENCH_DATABASE_URL=postgres://… npm run bench:moves
 *
 * Every round moves every asset to another location, in transactions of `--batch` assets,
 * through ingest's own statements (setCurrentLocations and appendStays, as the restricted
 * role under row-level security): the position's new version and the new stay. In the same
 * run, the same rows go into bare copies of the two tables (owner, no row-level security,
 * triggers or keys): with the same indexes, with the primary key alone, and with none. It
 * prints microseconds per moved asset (median round) of each, and the ratios: how much of a
 * move's database time is the index entries the schema asks for, and how much is ours.
 * Wall time of one connection working alone, so a 2-core machine's noise moves it less than
 * the end-to-end bench; rounds after the first update rows that earlier rounds left dead.
 */
import { randomBytes } from 'node:crypto';
import { benchArgs, positiveInteger } from '../dist/bench/cli-args.js';
import { adminQuery, benchPostgres } from '../dist/bench/harness.js';
import { int8Array, timestampArray } from '../dist/src/db/binary-arrays.js';
import { migrate } from '../dist/src/db/migrate.js';
import { createDatabase } from '../dist/src/db/pool.js';
import { setCurrentLocations } from '../dist/src/tracking/positions-repository.js';
import { appendStays } from '../dist/src/tracking/repository.js';

const USAGE = `npm run bench:moves [-- options]
  --assets N      assets moved every round (10000)
  --rounds N      rounds; the median is printed (10)
  --batch N       assets per transaction (2500)
  --locations N   locations the assets move between (16)
env: BENCH_DATABASE_URL (a PostgreSQL server instead of the embedded one)`;

const { values: args } = benchArgs(USAGE, {
  options: {
    assets: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '10' },
    batch: { type: 'string', default: '2500' },
    locations: { type: 'string', default: '16' },
  },
});
const ASSETS = positiveInteger('assets', args.assets, USAGE);
const ROUNDS = positiveInteger('rounds', args.rounds, USAGE);
const BATCH = positiveInteger('batch', args.batch, USAGE);
const LOCATIONS = positiveInteger('locations', args.locations, USAGE);

/** The bare copies: each side's positions and stays, created by the owner. */
const BARE = {
  'same indexes': `
    CREATE TABLE bare_positions (asset_id bigint PRIMARY KEY, org_id bigint NOT NULL, location_id bigint NOT NULL,
      last_seen_at timestamptz, valid_from timestamptz NOT NULL, valid_to timestamptz, deleted_at timestamptz);
    CREATE INDEX ON bare_positions (org_id, location_id);
    CREATE INDEX ON bare_positions (org_id, last_seen_at, asset_id) INCLUDE (location_id, valid_from, valid_to, deleted_at);
    CREATE TABLE bare_stays (id bigint GENERATED ALWAYS AS IDENTITY, org_id bigint NOT NULL,
      asset_id bigint NOT NULL, location_id bigint NOT NULL, started_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL, PRIMARY KEY (org_id, asset_id, started_at)) WITH (fillfactor = 70);`,
  'primary keys only': `
    CREATE TABLE bare_positions (asset_id bigint PRIMARY KEY, org_id bigint NOT NULL, location_id bigint NOT NULL,
      last_seen_at timestamptz, valid_from timestamptz NOT NULL, valid_to timestamptz, deleted_at timestamptz);
    CREATE TABLE bare_stays (id bigint GENERATED ALWAYS AS IDENTITY, org_id bigint NOT NULL,
      asset_id bigint NOT NULL, location_id bigint NOT NULL, started_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL, PRIMARY KEY (org_id, asset_id, started_at)) WITH (fillfactor = 70);`,
  'no indexes': `
    CREATE TABLE bare_positions (asset_id bigint, org_id bigint NOT NULL, location_id bigint NOT NULL,
      last_seen_at timestamptz, valid_from timestamptz NOT NULL, valid_to timestamptz, deleted_at timestamptz);
    CREATE TABLE bare_stays (id bigint GENERATED ALWAYS AS IDENTITY, org_id bigint NOT NULL,
      asset_id bigint NOT NULL, location_id bigint NOT NULL, started_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL) WITH (fillfactor = 70);`,
};

/** The moves of round `k`: every asset, one location on, a second later than the last round. */
function round(k, assetIds, locationIds, validity, base) {
  return assetIds.map((assetId, i) => {
    const at = base + k * 1000 + (i % 1000);
    return {
      assetId,
      locationId: locationIds[(i + k) % locationIds.length],
      startedAt: at,
      lastSeenAt: at,
      validity,
    };
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const server = await benchPostgres(process.env.BENCH_DATABASE_URL);
  const name = `tagtrail_bench_moves_${randomBytes(4).toString('hex')}`;
  await adminQuery(server.adminUrl, `CREATE DATABASE ${name}`);
  const db = createDatabase(server.urlFor(name), { max: 2 });
  try {
    await migrate(db.pool);
    const version = (await db.pool.query('SHOW server_version')).rows[0].server_version;
    const orgId = (await db.pool.query(`INSERT INTO organizations (name) VALUES ('bench') RETURNING id`))
      .rows[0].id;
    const locationIds = (
      await db.pool.query(
        `INSERT INTO locations (org_id, external_key, name)
         SELECT $1, 'L-' || g, 'Location ' || g FROM generate_series(1, $2::int) g RETURNING id`,
        [orgId, LOCATIONS],
      )
    ).rows.map((r) => Number(r.id));
    const assetIds = (
      await db.pool.query(
        `INSERT INTO assets (org_id, external_key, name, valid_from)
         SELECT $1, 'A-' || g, 'Asset ' || g, timestamptz '2020-01-01' FROM generate_series(1, $2::int) g RETURNING id`,
        [orgId, ASSETS],
      )
    ).rows.map((r) => Number(r.id));
    const validity = { validFrom: '2020-01-01 00:00:00+00', validTo: null };
    const base = Date.parse('2026-01-01T00:00:00Z');
    const results = [];

    /**
     * µs per moved asset of each round: every asset moved, BATCH to a transaction, which
     * `write(k, batch, time)` runs, timing each of its two statements with `time(part, run)`.
     */
    const timeRounds = async (write) => {
      const out = { positions: [], stays: [] };
      for (let k = 0; k < ROUNDS; k++) {
        const rows = round(k, assetIds, locationIds, validity, base);
        const ms = { positions: 0, stays: 0 };
        const time = async (part, run) => {
          const t0 = performance.now();
          await run();
          ms[part] += performance.now() - t0;
        };
        for (let from = 0; from < rows.length; from += BATCH)
          await write(k, rows.slice(from, from + BATCH), time);
        out.positions.push((ms.positions * 1000) / rows.length);
        out.stays.push((ms.stays * 1000) / rows.length);
      }
      return out;
    };

    // Ingest's statements, as ingest runs them.
    const ingest = await timeRounds((_k, batch, time) =>
      db.withOrg(orgId, async (tx) => {
        await time('positions', () => setCurrentLocations(tx, orgId, batch));
        await time('stays', () => appendStays(tx, orgId, batch));
      }),
    );
    results.push({ side: 'tagtrail (ingest statements, RLS)', ...ingest });

    // The same rows into bare tables, by the owner, with the statements' shape.
    for (const [side, ddl] of Object.entries(BARE)) {
      await db.pool.query(`DROP TABLE IF EXISTS bare_positions, bare_stays; ${ddl}`);
      const bare = await timeRounds((k, batch, time) =>
        db.system(async (tx) => {
          const values = [
            orgId,
            int8Array(batch.map((r) => r.assetId)),
            int8Array(batch.map((r) => r.locationId)),
            timestampArray(batch.map((r) => r.lastSeenAt)),
          ];
          // No key to conflict on without indexes: the first round inserts, the others update.
          const positions =
            side !== 'no indexes'
              ? `INSERT INTO bare_positions AS p (org_id, asset_id, location_id, last_seen_at, valid_from)
                 SELECT $1, *, timestamptz '2020-01-01' FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[])
                 ON CONFLICT (asset_id) DO UPDATE SET location_id = excluded.location_id, last_seen_at = excluded.last_seen_at`
              : k === 0
                ? `INSERT INTO bare_positions (org_id, asset_id, location_id, last_seen_at, valid_from)
                   SELECT $1, *, timestamptz '2020-01-01' FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[])`
                : `UPDATE bare_positions p SET location_id = v.l, last_seen_at = v.t
                   FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[]) AS v(a, l, t)
                   WHERE p.org_id = $1 AND p.asset_id = v.a`;
          await time('positions', () => tx.query(positions, values));
          await time('stays', () =>
            tx.query(
              `INSERT INTO bare_stays (org_id, asset_id, location_id, started_at, last_seen_at)
               SELECT $1, a, l, t, t FROM unnest($2::bigint[], $3::bigint[], $4::timestamptz[]) AS v(a, l, t)`,
              values,
            ),
          );
        }),
      );
      results.push({ side: `bare, ${side}`, ...bare });
    }

    const first = results[0];
    const total = (r) => median(r.positions) + median(r.stays);
    console.log(
      `database time per moved asset (µs, median of ${ROUNDS} rounds): ${ASSETS} assets, ` +
        `${LOCATIONS} locations, ${BATCH} per transaction, PostgreSQL ${version}, one connection\n`,
    );
    console.log(
      `${'side'.padEnd(36)}${'position'.padStart(10)}${'stay'.padStart(8)}${'both'.padStart(8)}  tagtrail / side`,
    );
    for (const r of results) {
      console.log(
        `${r.side.padEnd(36)}${median(r.positions).toFixed(1).padStart(10)}${median(r.stays).toFixed(1).padStart(8)}` +
          `${total(r).toFixed(1).padStart(8)}  ${r === first ? '' : `${((total(first) / total(r)) * 100).toFixed(0)}%`}`,
      );
    }
  } finally {
    await db.close();
    await adminQuery(server.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.stop();
  }
}

await main();
