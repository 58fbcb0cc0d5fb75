#!/usr/bin/env node
/**
 * Asset lists at a million assets per organization.
 *
 *   npm run bench:list                       # embedded PostgreSQL in a temporary directory
 *   BENCH_DATABASE_URL=postgres://… npm run bench:list   # any server (a fresh database is made on it)
 *
 * Seeds 1,000,000 assets of realistic width (bench/seed-assets.sql) into one organization
 * and 100,000 into another, then for the default order, each sort in both directions, q,
 * and the filters, runs EXPLAIN ANALYZE of the exact statements the repository builds
 * (page and total count, as the restricted role inside the organization's transaction)
 * and prints the plan shape and the execution time (best of three). It then times list
 * requests through the service, and creates without a key in an organization with 100,000
 * auto-keyed assets. Imports the compiled service from dist/ (the script builds it first).
 * The database is dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { benchArgs } from '../dist/bench/cli-args.js';
import { adminQuery, benchPostgres } from '../dist/bench/harness.js';
import { buildAssetListSql } from '../dist/src/assets/repository-list.js';
import { AssetService } from '../dist/src/assets/service.js';
import { cliCaller } from '../dist/src/caller.js';
import { migrate } from '../dist/src/db/migrate.js';
import { createDatabase } from '../dist/src/db/pool.js';
import { containsPattern } from '../dist/src/master-data/list-query.js';

benchArgs(
  `usage: npm run bench:list   (no options; docs/performance.md)
env: BENCH_DATABASE_URL (a PostgreSQL server instead of the embedded one), BENCH_ASSETS (1000000)`,
  { options: {} },
);
const BIG = Number(process.env.BENCH_ASSETS ?? 1_000_000);
const OTHER = Math.round(BIG / 10);
const CHUNK = 100_000;

const nodesOf = (plan) => [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];

function shape(plan) {
  return nodesOf(plan)
    .filter((n) => /Scan/.test(n['Node Type']) && n['Relation Name'] !== 'locations')
    .map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`)
    .join(' + ');
}

async function main() {
  const server = await benchPostgres(process.env.BENCH_DATABASE_URL);
  const name = `tagtrail_bench_${randomBytes(4).toString('hex')}`;
  await adminQuery(server.adminUrl, `CREATE DATABASE ${name}`);
  // Seeding a million assets on a loaded machine may take longer than a request may.
  const db = createDatabase(server.urlFor(name), {
    max: 4,
    statementTimeoutMs: 600_000,
    queryTimeoutMs: 600_000,
  });
  try {
    await migrate(db.pool);
    const version = (await db.pool.query('SHOW server_version')).rows[0].server_version;
    const orgs = await db.pool.query(
      "INSERT INTO organizations (name) VALUES ('Big'), ('Other'), ('Auto') RETURNING id",
    );
    const [big, other, auto] = orgs.rows.map((r) => r.id);
    const dock = (
      await db.pool.query(
        "INSERT INTO locations (org_id, external_key, name) VALUES ($1, 'DOCK-1', 'Dock 1') RETURNING id",
        [big],
      )
    ).rows[0].id;
    const seed = await readFile(new URL('./seed-assets.sql', import.meta.url), 'utf8');
    const started = Date.now();
    for (let from = 1; from <= BIG; from += CHUNK) {
      await db.pool.query(seed, [big, from, Math.min(from + CHUNK - 1, BIG), dock]);
      process.stdout.write(`\rseeding: ${Math.min(from + CHUNK - 1, BIG)} / ${BIG}`);
    }
    await db.pool.query(seed, [other, 1, OTHER, null]);
    await db.pool.query(
      `INSERT INTO assets (org_id, external_key, name)
       SELECT $1, 'ASSET-' || CASE WHEN g < 10000 THEN lpad(g::text, 4, '0') ELSE g::text END, 'Auto ' || g
       FROM generate_series(1, $2::int) g`,
      [auto, OTHER],
    );
    await db.pool.query('VACUUM ANALYZE assets');
    await db.pool.query('VACUUM ANALYZE asset_positions');
    await db.pool.query('ANALYZE locations');
    console.log(
      `\rseeded ${BIG} + ${OTHER} + ${OTHER} assets in ${((Date.now() - started) / 1000).toFixed(0)} s on PostgreSQL ${version}`,
    );

    const base = { includeDeleted: false, sort: [], limit: 50, offset: 0 };
    const by = (field, desc) => ({ sort: [{ field, desc }] });
    const cases = [
      ['default order', {}],
      ...['external_key', 'name', 'created_at', 'updated_at'].flatMap((f) => [
        [`sort=${f}`, by(f, false)],
        [`sort=-${f}`, by(f, true)],
      ]),
      ['q=7f3 (3 chars)', { searchPattern: containsPattern('7f3') }],
      ['q=c0ffe', { searchPattern: containsPattern('c0ffe') }],
      ['q=c0ffe&sort=-name', { searchPattern: containsPattern('c0ffe'), ...by('name', true) }],
      ['q=lift (every asset)', { searchPattern: containsPattern('lift') }],
      ['external_key=2 values', { externalKeys: ['FL-0000042', 'FL-0500000'] }],
      ['location_id (a tenth there)', { locationIds: [dock] }],
      ['location_external_key', { locationKeys: ['DOCK-1'] }],
      ['is_active=false', { isActive: false }],
      ['include_deleted=true', { includeDeleted: true }],
      ['offset=10000', { offset: 10_000 }],
    ];

    const explain = (query) =>
      db.withOrg(big, async (tx) => {
        let best;
        for (let i = 0; i < 3; i++) {
          const { rows } = await tx.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`, query.values);
          const result = rows[0]['QUERY PLAN'][0];
          if (!best || result['Execution Time'] < best['Execution Time']) best = result;
        }
        return best;
      });

    console.log('\nEXPLAIN ANALYZE, best of 3 (ms), organization with', BIG, 'assets');
    console.log(
      `${'query'.padEnd(28)} ${'page ms'.padStart(8)} ${'count ms'.padStart(9)}  plan (page | count)`,
    );
    for (const [label, change] of cases) {
      const sql = buildAssetListSql(big, { ...base, ...change });
      const page = await explain(sql.page);
      const count = await explain(sql.count);
      const seq = [page, count].some((p) =>
        nodesOf(p.Plan).some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'assets'),
      );
      console.log(
        `${label.padEnd(28)} ${page['Execution Time'].toFixed(2).padStart(8)} ${count['Execution Time']
          .toFixed(2)
          .padStart(9)}  ${shape(page.Plan)} | ${shape(count.Plan)}${seq ? '  [Seq Scan]' : ''}`,
      );
    }

    const assets = new AssetService(db);
    const query = { include_deleted: false, limit: 50, offset: 0 };
    console.log('\nGET /api/v1/assets through the service (page, tags and total), median of 5 (ms)');
    for (const [label, params] of [
      ['default', {}],
      ['sort=-updated_at', { sort: '-updated_at' }],
      ['q=c0ffe', { q: 'c0ffe' }],
      ['q=forklift', { q: 'forklift' }],
    ]) {
      const times = [];
      let total = 0;
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        total = (await assets.list(big, { ...query, ...params })).total_count;
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      console.log(`${label.padEnd(28)} ${times[2].toFixed(2).padStart(8)}  total_count ${total}`);
    }

    console.log(
      `\nPOST /api/v1/assets without external_key, ${OTHER} auto-keyed assets in the organization (ms)`,
    );
    const slot5 = (
      await db.pool.query("SELECT id FROM assets WHERE org_id = $1 AND external_key = 'ASSET-0005'", [auto])
    ).rows[0].id;
    const createTimes = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const created = await assets.create(cliCaller(auto), { name: `Bench ${i}` });
      createTimes.push([performance.now() - t0, created.external_key]);
      // Frees a slot far below the watermark: the next create takes it, the one after
      // walks once back up to the end.
      if (i === 9) await assets.remove(cliCaller(auto), slot5);
    }
    console.log(createTimes.map(([ms, key], i) => `${i + 1}: ${key} ${ms.toFixed(1)}`).join('\n'));
  } finally {
    await db.close();
    await adminQuery(server.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.stop();
  }
}

await main();
