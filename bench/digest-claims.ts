/**
 * What a redelivery claim costs once the claims table holds a week of messages
 * (src/ingest/message-digests.ts; migration 0057): the claims keyed by (reader, digest),
 * as 0025 keyed them (the baseline), against the claims keyed by (reader, earliest reader
 * time, digest), in the same run on the same server. Each side is a table filled with
 * `--rows` claims of 50 readers spread over seven days; after a CHECKPOINT (as one comes
 * every few minutes), `--claims` new claims go in by statements of `--batch` (as group
 * commit sends them), the sides taking turns for `--rounds` rounds. Printed per side:
 * claims/s, WAL bytes and full-page images per claim, and the primary key's size.
 *
 *   npm run bench:digests
 *   npm run bench:digests -- --rows 4000000 --claims 50000 --batch 1
 *   TEST_DATABASE_URL=postgres://… npm run bench:digests     # another server
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { int8Array } from '../src/db/binary-arrays.js';
import { migrate } from '../src/db/migrate.js';
import { claimDigests, type DigestClaim } from '../src/ingest/message-digests.js';
import { benchArgs, positiveInteger } from './cli-args.js';
import { adminQuery, benchPostgres } from './harness.js';

const USAGE = `npm run bench:digests [-- options]
  --rows N     claims already in each side's table, 50 readers over seven days (2000000)
  --claims N   new claims measured per side and round (20000)
  --batch N    claims per statement, as group commit sends them (20)
  --rounds N   rounds, the sides taking turns (2)
env: TEST_DATABASE_URL (a PostgreSQL server instead of the embedded one)`;

const { values: args } = benchArgs(USAGE, {
  options: {
    rows: { type: 'string', default: '2000000' },
    claims: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
  },
});
const ROWS = positiveInteger('rows', args.rows, USAGE);
const CLAIMS = positiveInteger('claims', args.claims, USAGE);
const BATCH = positiveInteger('batch', args.batch, USAGE);
const ROUNDS = positiveInteger('rounds', args.rounds, USAGE);
const READERS = 50;
const WEEK_MS = 7 * 24 * 3_600_000;

/** The baseline: 0025's claims table and the statement that claimed into it, restated. */
const BASELINE_TABLE = `CREATE TABLE claims_0025 (
  reader_id bigint NOT NULL,
  digest bytea NOT NULL CHECK (octet_length(digest) = 16),
  org_id bigint NOT NULL,
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (reader_id, digest));
CREATE INDEX ON claims_0025 USING brin (seen_at)`;

async function claimBaseline(client: pg.ClientBase, claims: DigestClaim[]): Promise<void> {
  await client.query(
    `WITH ins AS (
       INSERT INTO claims_0025 (reader_id, digest, org_id, seen_at)
       SELECT c.r, substring($3::bytea FROM (c.i::int - 1) * 16 + 1 FOR 16), $1,
         timestamptz 'epoch' + c.ms * interval '1 millisecond'
       FROM unnest($2::bigint[], $4::bigint[]) WITH ORDINALITY AS c(r, ms, i)
       ORDER BY 1, 2
       ON CONFLICT DO NOTHING
       RETURNING reader_id, digest)
     SELECT count(*)::int AS claimed,
       CASE WHEN count(*) < $5 THEN string_agg(reader_id || ':' || encode(digest, 'hex'), ',') END AS keys
     FROM ins`,
    [
      1,
      int8Array(claims.map((c) => c.readerId)),
      Buffer.concat(claims.map((c) => c.digest)),
      int8Array(claims.map((c) => c.receivedAt)),
      claims.length,
    ],
  );
}

/** A week of claims, oldest first, as the service would have made them. */
async function fill(client: pg.ClientBase, now: number): Promise<void> {
  const step = WEEK_MS / ROWS;
  await client.query(
    `INSERT INTO claims_0025 (reader_id, digest, org_id, seen_at)
     SELECT g % ${READERS}, substring(sha256(g::text::bytea) FOR 16), 1,
       to_timestamp(($1::bigint + g * $2::float8) / 1000)
     FROM generate_series(1, $3::int) g`,
    [now - WEEK_MS, step, ROWS],
  );
  await client.query(
    `INSERT INTO message_digests (reader_id, first_read_at, digest, org_id, seen_at)
     SELECT g % ${READERS}, to_timestamp(($1::bigint + g * $2::float8 - 1000) / 1000),
       substring(sha256(g::text::bytea) FOR 16), 1, to_timestamp(($1::bigint + g * $2::float8) / 1000)
     FROM generate_series(1, $3::int) g`,
    [now - WEEK_MS, step, ROWS],
  );
  await client.query('VACUUM ANALYZE claims_0025');
  await client.query('VACUUM ANALYZE message_digests');
}

/** `CLAIMS` new claims in arrival order, each read a second before it came. */
function newClaims(start: number): DigestClaim[] {
  const salt = randomBytes(8);
  return Array.from({ length: CLAIMS }, (_, i) => ({
    readerId: i % READERS,
    digest: createHash('sha256').update(salt).update(String(i)).digest().subarray(0, 16),
    firstReadAt: start + i - 1000,
    receivedAt: start + i,
  }));
}

interface Measured {
  perSecond: number;
  walBytes: number;
  fpi: number;
}

/** Where the WAL is and how many full-page images it took so far (the backend's counts flushed first). */
async function walNow(client: pg.ClientBase): Promise<{ lsn: string; fpi: number }> {
  await client.query('SELECT pg_stat_force_next_flush()');
  await client.query('SELECT 1');
  const { rows } = await client.query<{ lsn: string; fpi: string }>(
    'SELECT pg_current_wal_lsn()::text AS lsn, (SELECT wal_fpi FROM pg_stat_wal)::text AS fpi',
  );
  return { lsn: rows[0]!.lsn, fpi: Number(rows[0]!.fpi) };
}

async function measure(
  client: pg.ClientBase,
  claims: DigestClaim[],
  insert: (batch: DigestClaim[]) => Promise<unknown>,
): Promise<Measured> {
  await client.query('CHECKPOINT');
  const before = await walNow(client);
  const started = process.hrtime.bigint();
  for (let i = 0; i < claims.length; i += BATCH) await insert(claims.slice(i, i + BATCH));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const after = await walNow(client);
  const { rows } = await client.query<{ bytes: string }>(
    'SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text AS bytes',
    [after.lsn, before.lsn],
  );
  return {
    perSecond: claims.length / seconds,
    walBytes: Number(rows[0]!.bytes) / claims.length,
    fpi: (after.fpi - before.fpi) / claims.length,
  };
}

/** The primary key's size, and the bytes per claim of the table with its indexes. */
async function sizes(client: pg.ClientBase, table: string): Promise<string> {
  const { rows } = await client.query<{ pk: string; per: string }>(
    `SELECT pg_size_pretty(pg_relation_size($2::regclass)) AS pk,
       round(pg_total_relation_size($1::regclass)::numeric / greatest(1, (SELECT count(*) FROM ${table})))::text AS per`,
    [table, `${table}_pkey`],
  );
  return `primary key ${rows[0]!.pk}, ${rows[0]!.per} bytes per claim with its indexes`;
}

async function main(): Promise<void> {
  const server = await benchPostgres();
  const name = `tagtrail_digests_${randomBytes(4).toString('hex')}`;
  await adminQuery(server.adminUrl, `CREATE DATABASE ${name}`);
  const client = new pg.Client({ connectionString: server.urlFor(name) });
  try {
    await client.connect();
    const pool = new pg.Pool({ connectionString: server.urlFor(name), max: 1 });
    await migrate(pool);
    await pool.end();
    await client.query(BASELINE_TABLE);
    const version = (await client.query('SHOW server_version')).rows[0].server_version;
    let now = Date.now();
    const filling = Date.now();
    await fill(client, now);
    console.log(
      `PostgreSQL ${version}: ${ROWS.toLocaleString('en')} claims a side (50 readers, 7 days) in ` +
        `${((Date.now() - filling) / 1000).toFixed(0)} s; ${CLAIMS.toLocaleString('en')} new claims a round, ${BATCH} a statement, ${ROUNDS} round(s)\n`,
    );
    console.log(
      'round  side                                    claims/s  WAL bytes/claim  full-page images/claim',
    );
    const totals = { baseline: [] as Measured[], keyed: [] as Measured[] };
    for (let round = 1; round <= ROUNDS; round++) {
      // Each side first in turn, so neither always meets the other's dirty pages.
      const sides = round % 2 === 1 ? (['baseline', 'keyed'] as const) : (['keyed', 'baseline'] as const);
      for (const side of sides) {
        now += CLAIMS + 1000;
        const claims = newClaims(now);
        const m =
          side === 'baseline'
            ? await measure(client, claims, (b) => claimBaseline(client, b))
            : await measure(client, claims, (b) => claimDigests(client as unknown as pg.PoolClient, 1, b));
        totals[side].push(m);
        const label =
          side === 'baseline' ? '(reader, digest), as 0025' : '(reader, first read, digest), 0057';
        console.log(
          `${String(round).padStart(5)}  ${label.padEnd(38)}  ${m.perSecond.toFixed(0).padStart(8)}  ${m.walBytes
            .toFixed(0)
            .padStart(15)}  ${m.fpi.toFixed(3).padStart(22)}`,
        );
      }
    }
    const mean = (ms: Measured[], k: keyof Measured) => ms.reduce((s, m) => s + m[k], 0) / ms.length;
    console.log(
      `\nkeyed / baseline: claims/s ${(mean(totals.keyed, 'perSecond') / mean(totals.baseline, 'perSecond')).toFixed(2)}x, ` +
        `WAL per claim ${(mean(totals.keyed, 'walBytes') / mean(totals.baseline, 'walBytes')).toFixed(2)}x\n` +
        `baseline: ${await sizes(client, 'claims_0025')}; keyed: ${await sizes(client, 'message_digests')}`,
    );
  } finally {
    await client.end().catch(() => undefined);
    await adminQuery(server.adminUrl, `DROP DATABASE IF EXISTS ${name}`).catch(() => undefined);
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
