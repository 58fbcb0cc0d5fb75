#!/usr/bin/env node
/**
 * The request path against the platform's own speed (issue 11).
 *
 *   npm run bench:api                                  # 10,000 assets, 10 s per case
 *   npm run bench:api -- --assets 1000000              # a million (seeded in SQL)
 *   npm run bench:api -- --duration 3 --only get,me    # short, for development
 *   BENCH_DATABASE_URL=postgres://… npm run bench:api  # any server (a fresh database is made on it)
 *   npm run bench:api -- --only mixed --rounds 4 --compare-pool 20   # pool sizes, alternated
 *   npm run bench:api -- --tls                         # tagtrail over its own HTTPS (TAGTRAIL_TLS_CERT)
 *
 * Starts tagtrail (the real server: auth, rate limit raised out of the way, row-level
 * security, validation, serialization) and, on the same database in the same run, a bare
 * Fastify + `pg` baseline that answers the same requests by calling the same services,
 * hence the same SQL, with no auth, no rate limit, no validation, no transaction around
 * reads and no row-level security (it connects as the table owner). Each case is loaded by
 * autocannon in a child process (so the load generator does not share the server's event
 * loop), the service first, then the baseline, and `--rounds` times. Prints req/s, p50 and
 * p99 of both and the ratio of req/s (after `--warmup` seconds of the same load, not counted), then the mixed load (issue 11) with the latency of
 * each kind of request as the server saw it. Imports the compiled service from dist/.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { benchArgs, positiveInteger, usageError } from '../dist/bench/cli-args.js';
import { adminQuery, benchPostgres } from '../dist/bench/harness.js';
import { printStatements } from '../dist/bench/server-stats.js';
import { buildServer } from '../dist/src/app.js';
import { migrate } from '../dist/src/db/migrate.js';
import { createDatabase } from '../dist/src/db/pool.js';
import { defaultPoolSize } from '../dist/src/db/pool-size.js';
import { MemoryRateLimitStore } from '../dist/src/http/rate-limit/memory-store.js';
import { SecretBox } from '../dist/src/secrets/secret-box.js';
import { createServices } from '../dist/src/services.js';
import { baselineApp } from './api-baseline.mjs';
import { apiRequests } from './api-cases.mjs';
import { cpu, cpuClock, fmt, roundsSummary, serverTimings, total } from './api-measure.mjs';
import { seed, settle } from './api-seed.mjs';

const CASE_IDS = [...apiRequests(1, 1).cases.map(([id]) => id), 'mixed'];
const USAGE = `npm run bench:api -- [options]   (docs/performance.md)
  --assets N          assets seeded (10000; a million is seeded in SQL)
  --duration S        seconds each case loads each side (10)
  --connections C     autocannon connections (50)
  --rounds N          each case N times, the side that goes first alternating (1)
  --warmup S          seconds of the same load first, not counted (2; 0: none)
  --only IDS          comma-separated cases: ${CASE_IDS.join(', ')}
  --no-mixed          leave the mixed load out
  --pool N            connections per pool, both sides (the service's default)
  --compare-pool N    the mixed load: the service with pools of N against itself with --pool
  --profile DIR       V8 CPU profiles of each measured load into DIR (bench/profile-summary.mjs)
  --log FILE          the service's log into FILE (otherwise silent)
  --tls               tagtrail over its own HTTPS (the baseline stays plain HTTP)
env: BENCH_DATABASE_URL (a PostgreSQL server instead of the embedded one),
BENCH_PG_STATS=1 (PostgreSQL's top statements per case and side)`;

const { values: args } = benchArgs(USAGE, {
  options: {
    assets: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '2' },
    only: { type: 'string' },
    'no-mixed': { type: 'boolean', default: false },
    profile: { type: 'string' },
    log: { type: 'string' },
    // Connections per pool, of the service and of the baseline alike (default: the service's own).
    pool: { type: 'string' },
    // The mixed load only: the service with pools of this size against the service with --pool,
    // alternated over --rounds, instead of against the baseline.
    'compare-pool': { type: 'string' },
    // tagtrail serves HTTPS (a self-signed certificate made by openssl); the baseline stays plain.
    tls: { type: 'boolean', default: false },
  },
});
const ASSETS = positiveInteger('assets', args.assets, USAGE);
const DURATION = positiveInteger('duration', args.duration, USAGE);
const CONNECTIONS = positiveInteger('connections', args.connections, USAGE);
const ROUNDS = positiveInteger('rounds', args.rounds, USAGE);
const WARMUP = args.warmup === '0' ? 0 : positiveInteger('warmup', args.warmup, USAGE);
for (const id of args.only?.split(',') ?? []) {
  if (!CASE_IDS.includes(id)) usageError(`--only: no case ${JSON.stringify(id)}`, USAGE);
}
if (args['compare-pool'] !== undefined) positiveInteger('compare-pool', args['compare-pool'], USAGE);
const POOL = args.pool === undefined ? defaultPoolSize() : positiveInteger('pool', args.pool, USAGE);
const run = promisify(execFile);

let cpuNow = cpuClock(undefined);

/**
 * `--profile <dir>`: a V8 CPU profile of this process (both servers live in it; autocannon
 * does not) over each measured load, written as <dir>/<case>-<side>-r<round>.cpuprofile
 * for bench/profile-summary.mjs or Chrome's DevTools. Profiling costs CPU: the figures of a
 * profiled run are not comparable with an unprofiled one.
 */
async function profiled(name, work) {
  if (!args.profile) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(args.profile, { recursive: true });
    writeFileSync(join(args.profile, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

async function load(url, requests, headers, profileName) {
  const before = cpuNow();
  const result = await (profileName
    ? profiled(profileName, () => loadOnly(url, requests, headers))
    : loadOnly(url, requests, headers));
  const after = cpuNow();
  result.nodeMs = (after.node - before.node) / result.total;
  result.pgMs = before.pg === undefined ? undefined : (after.pg - before.pg) / result.total;
  result.writes = (after.writes - before.writes) / result.total;
  return result;
}

async function loadOnly(url, requests, headers, duration = DURATION) {
  const job = { url, connections: CONNECTIONS, duration, headers, requests };
  const { stdout } = await run(
    process.execPath,
    [new URL('./api-load.mjs', import.meta.url).pathname, JSON.stringify(job)],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

/** The service's parts as the bench runs them: no Redis, the rate limit out of the way. */
function benchServices(db) {
  return createServices(
    db,
    {
      TAGTRAIL_ENV: 'production',
      secrets: new SecretBox([randomBytes(32)]),
      REDIS_URL: undefined,
      TAGTRAIL_RATE_LIMIT: 1e9,
      TAGTRAIL_RATE_WINDOW_SECONDS: 60,
    },
    new MemoryRateLimitStore({ limit: 1e9, windowSeconds: 60 }),
  );
}

/** BENCH_PG_STATS: pg_stat_statements from zero, for the load that follows. */
async function resetStatements(pool) {
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await pool.query('SELECT pg_stat_statements_reset()');
}

async function main() {
  const server = await benchPostgres(process.env.BENCH_DATABASE_URL);
  if (server.dataDir) {
    const pidFile = join(server.dataDir, 'postgres', 'postmaster.pid');
    cpuNow = cpuClock(Number(readFileSync(pidFile, 'utf8').split('\n')[0]));
  }
  const name = `tagtrail_bench_${randomBytes(4).toString('hex')}`;
  await adminQuery(server.adminUrl, `CREATE DATABASE ${name}`);
  const url = server.urlFor(name);
  // Seeding a million assets on a loaded machine may take longer than a request may.
  const db = createDatabase(url, { max: POOL, statementTimeoutMs: 600_000, queryTimeoutMs: 600_000 });
  const closers = [];
  try {
    await migrate(db.pool);
    const version = (await db.pool.query('SHOW server_version')).rows[0].server_version;
    const services = await benchServices(db);
    closers.push(() => services.close());
    const org = await services.organizations.create('Bench');
    const started = Date.now();
    // Seeding a million rows takes longer than the service's statement timeout allows.
    const seeder = new pg.Pool({ connectionString: url, max: 1 });
    const { root } = await seed(seeder, org.id, ASSETS).finally(() => seeder.end());
    console.log(
      `\rseeded ${ASSETS} assets in ${((Date.now() - started) / 1000).toFixed(0)} s on PostgreSQL ${version}; ` +
        `node ${process.version}, ${CONNECTIONS} connections, ${DURATION} s per case and side, ${ROUNDS} round(s), ` +
        `pools of ${POOL} connections`,
    );
    const { token } = await services.keys.mint({
      caller: { orgId: org.id, actor: { type: 'cli', name: 'bench' } },
      scopes: ['assets:read', 'assets:write', 'locations:read', 'locations:write', 'tracking:read'],
    });

    // `--log <file>`: the request log on, at info, written to <file> as the service writes it
    // to standard output (pino's asynchronous destination); without it logging is off.
    const logger = args.log ? { level: 'info', file: args.log } : undefined;
    const tls = args.tls ? await selfSignedPair() : undefined;
    const service = await buildServer(services, { bodyLimit: 1048576, logger, tls });
    await service.listen({ host: '127.0.0.1', port: 0 });
    closers.push(() => service.close());
    const baseline = await baselineApp(url, org.id, { pool: POOL });
    await baseline.app.listen({ host: '127.0.0.1', port: 0 });
    closers.push(() => baseline.close());
    // `--compare-pool n`: a second service on the same database, its pools n connections.
    let other;
    if (args['compare-pool']) {
      const size = Number(args['compare-pool']);
      const otherDb = createDatabase(url, { max: size });
      closers.push(() => otherDb.close());
      const otherServices = await benchServices(otherDb);
      closers.push(() => otherServices.close());
      const app = await buildServer(otherServices, { bodyLimit: 1048576 });
      await app.listen({ host: '127.0.0.1', port: 0 });
      closers.push(() => app.close());
      other = [
        `pool ${size}`,
        `http://127.0.0.1:${app.server.address().port}`,
        { authorization: `Bearer ${token}` },
        serverTimings(app),
      ];
    }
    const sides = [
      [
        'tagtrail',
        `${tls ? 'https' : 'http'}://127.0.0.1:${service.server.address().port}`,
        { authorization: `Bearer ${token}` },
        serverTimings(service),
      ],
      ['baseline', `http://127.0.0.1:${baseline.app.server.address().port}`, {}, serverTimings(baseline.app)],
    ];

    const { cases: allCases, mix } = apiRequests(ASSETS, root);
    const cases = allCases.filter(([id]) => !args.only || args.only.split(',').includes(id));

    console.log(
      `\n${'request'.padEnd(32)} ${(tls ? 'tagtrail (HTTPS)' : 'tagtrail').padEnd(36)} ${'baseline'.padEnd(36)} ratio`,
    );
    for (const [id, label, requests] of cases) {
      const byOrder = { tagtrail: [], baseline: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const results = [];
        // Odd rounds run the baseline first: whichever side goes first meets the cache the
        // settling left, so the order alternates rather than always favouring one side.
        const order = round % 2 === 0 ? [0, 1] : [1, 0];
        for (const i of order) {
          const [side, base, headers] = sides[i];
          await settle(db.pool);
          // Not counted: the first requests of a route run before the JIT has compiled its code.
          if (round === 0 && WARMUP > 0) await loadOnly(base, requests, headers, WARMUP);
          if (process.env.BENCH_PG_STATS) await resetStatements(db.pool);
          results[i] = await load(base, requests, headers, `${id}-${side}-r${round + 1}`);
          if (process.env.BENCH_PG_STATS) await printStatements(db.pool, `${id}-${side}-r${round + 1}`);
        }
        const ratio = ((results[0].rps / results[1].rps) * 100).toFixed(0);
        byOrder[round % 2 === 0 ? 'tagtrail' : 'baseline'].push(results);
        console.log(
          `${label.padEnd(32)} ${fmt(results[0]).padEnd(36)} ${fmt(results[1]).padEnd(36)} ${ratio}%`,
        );
        // Baseline CPU over tagtrail CPU per request: the req/s ratio a saturated machine would show.
        const cpuRatio = (total(results[1]) / total(results[0])) * 100;
        console.log(
          `${''.padEnd(32)}${cpu(results[0]).padEnd(55)}${cpu(results[1]).padEnd(55)}${cpuRatio.toFixed(0)}% by cpu`,
        );
      }
      if (ROUNDS > 1) console.log(`${''.padEnd(32)}${roundsSummary(byOrder)}`);
    }

    if (!args['no-mixed'] && (!args.only || args.only.split(',').includes('mixed'))) {
      console.log('\nmixed load: 40% list with q, 20% get, 13% POST, 12% PATCH, 8% descendants, 7% report');
      // Against the baseline once, or (--compare-pool) the two pool sizes alternated per round.
      const pairs = other ? [[`pool ${POOL}`, ...sides[0].slice(1)], other] : sides;
      const order = other
        ? Array.from({ length: ROUNDS }, (_, r) => (r % 2 ? [...pairs].reverse() : pairs)).flat()
        : pairs;
      for (const [side, base, headers, timings] of order) {
        await settle(db.pool);
        if (WARMUP > 0) await loadOnly(base, mix, headers, WARMUP);
        timings.reset();
        if (process.env.BENCH_PG_STATS) await resetStatements(db.pool);
        const result = await load(base, mix, headers, `mixed-${side}`);
        console.log(`${side.padEnd(10)} ${fmt(result)},${cpu(result)}`);
        for (const line of timings.summary()) console.log(`${''.padEnd(10)} server-side ${line}`);
        if (process.env.BENCH_PG_STATS) await printStatements(db.pool, `mixed-${side}`);
      }
    }
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await db.close();
    await adminQuery(server.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await server.stop();
  }
}

/** A certificate for 127.0.0.1 and its key, made by the openssl CLI (autocannon does not check it). */
async function selfSignedPair() {
  const dir = await mkdtemp(join(tmpdir(), 'tagtrail-bench-tls-'));
  try {
    await promisify(execFile)('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ]);
    return { cert: await readFile(join(dir, 'cert.pem')), key: await readFile(join(dir, 'key.pem')) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
