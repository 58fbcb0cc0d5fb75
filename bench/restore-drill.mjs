/**
 * The restore drill (docs/operations.md, "Backups"): a backup taken under load, restored
 * into a new data directory and started, and what it holds checked against what was
 * acknowledged and when.
 *
 *   npm run build && node bench/restore-drill.mjs                # 40 s of load
 *   node bench/restore-drill.mjs --seconds 90 --writes 200 --reads 1200
 *
 * Runs `tagtrail serve` as an operator does, on a data directory of its own under .tmp/
 * (ports 41400-41411), and sets up two organizations (bench/soak-site.mjs: assets with tags,
 * locations, MQTT readers and a reader-webhook reader with scan points, an API key, a webhook
 * endpoint to a receiver here). Then it loads the service (bench/drill-load.mjs: API writers
 * creating assets, readers at QoS 1 and over the reader webhook), each acknowledgement
 * recorded with its time, and runs `tagtrail backup` during the load, timing the command and
 * watching the server for the backup's pg_backup_start and pg_backup_stop. It stops the
 * service, runs `tagtrail restore` into a fresh data directory, starts the restored service
 * and checks the promises the docs make:
 *   - every write acknowledged before pg_backup_stop began (and so before the command
 *     started) is in the restored service;
 *   - of those acknowledged while the command ran, how many are there, and how close to its
 *     end the latest one was acknowledged;
 *   - none acknowledged after the command ended is;
 *   - each reader's counters equal its messages' reads in the raw log;
 *   - the webhook deliveries pending in the backup are sent by the restored service (none
 *     left pending), and how many of them the original service had sent already.
 * It exits 1 when a promise is broken; its data directories are removed unless it failed.
 */
import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { benchArgs, positiveInteger } from '../dist/bench/cli-args.js';
import { Ledger, startLoad, webhookReceiver } from './drill-load.mjs';
import { embeddedUrl, MAIN, serviceEnv, startService } from './served.mjs';
import { setUpSite } from './soak-site.mjs';

const run = promisify(execFile);
const USAGE = `node bench/restore-drill.mjs [options]   (after npm run build; docs/operations.md)
  --seconds N   seconds of load; the backup starts at 40% of them (40)
  --writes N    assets created through the API per second, both organizations (120)
  --reads N     reads per second from the readers, in messages of --batch (1000)
  --batch N     reads per message (4)
  --assets N    tagged assets per organization (210)
  --keep        keep the data directories and the archive under .tmp/ even when all holds`;

const { values: args } = benchArgs(USAGE, {
  options: {
    seconds: { type: 'string', default: '40' },
    writes: { type: 'string', default: '120' },
    reads: { type: 'string', default: '1000' },
    batch: { type: 'string', default: '4' },
    assets: { type: 'string', default: '210' },
    keep: { type: 'boolean', default: false },
  },
});
const SECONDS = positiveInteger('seconds', args.seconds, USAGE);
const WRITES = positiveInteger('writes', args.writes, USAGE);
const READS = positiveInteger('reads', args.reads, USAGE);
const BATCH = positiveInteger('batch', args.batch, USAGE);
const ASSETS = positiveInteger('assets', args.assets, USAGE);
const PORTS = { api: 41400, mqtt: 41401, hooks: 41404, restoredApi: 41410, restoredMqtt: 41411 };
const ANTENNAS = 4;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const log = (line) => process.stderr.write(`${new Date().toISOString().slice(11, 23)} ${line}\n`);
const s = (ms) => (ms / 1000).toFixed(2);

const workDir = join(new URL('..', import.meta.url).pathname, '.tmp', `restore-drill-${Date.now()}`);
const liveDir = join(workDir, 'live');
const restoredDir = join(workDir, 'restored');
const archive = join(workDir, 'backup.tar.gz');
await mkdir(workDir, { recursive: true });
const envFor = (dataDir, api, mqtt) =>
  serviceEnv(dataDir, {
    PORT: String(api),
    TAGTRAIL_MQTT_PORT: String(mqtt),
    TAGTRAIL_WEBHOOK_ALLOW_PRIVATE: 'true',
    TAGTRAIL_WEBHOOK_RATE_LIMIT: '1000000',
    TAGTRAIL_MQTT_MAX_CONNECTIONS_PER_ADDRESS: '1000',
  });
const liveEnv = envFor(liveDir, PORTS.api, PORTS.mqtt);

const hooks = await webhookReceiver(PORTS.hooks);
const running = new Set();
const broken = [];
const promise = (holds, what) => {
  if (!holds) broken.push(what);
  return holds ? 'holds' : 'BROKEN';
};

async function stop(service) {
  if (!running.has(service)) return;
  running.delete(service);
  const exited = new Promise((resolve) => service.child.on('exit', resolve));
  service.child.kill('SIGTERM');
  await exited;
}

async function serve(env) {
  const service = await startService(env);
  running.add(service);
  const mqttUrl = /MQTT broker \(embedded\) listening on (mqtt:\/\/\S+)/.exec(service.out.stderr)?.[1];
  return { service, url: service.match[1], mqttUrl };
}

/** The acknowledged writes a database holds: asset external keys and raw-log `drill` ids. */
async function present(db) {
  const { rows } = await db.query(
    `SELECT DISTINCT external_key AS id FROM assets WHERE external_key LIKE 'DRILL-%'
     UNION ALL
     SELECT substring(payload FROM '"drill":"([^"]+)"') FROM raw_log WHERE payload LIKE '{"drill":%'`,
  );
  return new Set(rows.map((r) => r.id));
}

/** Readers whose counters differ from the reads of their messages in the raw log. */
async function counterMismatches(db) {
  const { rows } = await db.query(
    `SELECT r.id, r.good_reads + r.bad_reads + r.unknown_reads AS counted, coalesce(m.n, 0) AS logged
       FROM readers r LEFT JOIN (
         SELECT reader_id, sum(good_reads + bad_reads + unknown_reads) AS n FROM raw_messages GROUP BY reader_id
       ) m ON m.reader_id = r.id
      WHERE r.good_reads + r.bad_reads + r.unknown_reads <> coalesce(m.n, 0)`,
  );
  const { rows: all } = await db.query('SELECT count(*)::int AS n FROM readers');
  return { readers: all[0].n, mismatched: rows };
}

/**
 * Polls the server while the backup runs for its pg_backup_start and pg_backup_stop
 * statements; their query_start is when each began, on the server's clock (this machine's).
 */
function watchBackup(db) {
  const seen = {};
  let on = true;
  const done = (async () => {
    while (on) {
      const { rows } = await db.query(
        `SELECT query, query_start FROM pg_stat_activity
          WHERE query ~ 'pg_backup_(start|stop)\\(' AND pid <> pg_backend_pid()`,
      );
      for (const r of rows) {
        const which = r.query.includes('pg_backup_stop') ? 'stop' : 'start';
        seen[which] ??= r.query_start.getTime();
      }
      await pause(10);
    }
  })();
  return async () => {
    on = false;
    await done;
    return seen;
  };
}

let ok = false;
try {
  log(`data directory ${liveDir}`);
  const live = await serve(liveEnv);
  const assets = ASSETS;
  const sites = [];
  for (const [n, name] of ['Drill North', 'Drill South'].entries()) {
    sites.push(
      await setUpSite({
        url: live.url,
        env: liveEnv,
        name,
        readers: 2,
        httpReaders: 1,
        antennas: ANTENNAS,
        assets,
        webhookUrl: hooks.url,
        topicPrefix: `drill-${n}`,
      }),
    );
  }
  log(`set up 2 organizations, ${2 * assets} assets, 4 MQTT readers, 2 webhook readers`);
  // Readers are served on the notification of their creation; the periodic re-read is the backstop.
  await pause(6000);

  const liveDb = new pg.Pool({ connectionString: await embeddedUrl(liveDir), max: 2 });
  const ledger = new Ledger();
  const loadStart = Date.now();
  const load = await startLoad({
    url: live.url,
    mqttUrl: live.mqttUrl,
    sites,
    antennas: ANTENNAS,
    assets,
    writes: WRITES,
    reads: READS,
    perMessage: BATCH,
    ledger,
  });
  log(`loading for ${SECONDS} s`);
  await pause(loadStart + SECONDS * 400 - Date.now());

  log('backup starts');
  const watching = watchBackup(liveDb);
  const backupStart = Date.now();
  const backupRun = run(process.execPath, [MAIN, 'backup', '--out', archive, '--json'], { env: liveEnv });
  const backupOut = JSON.parse((await backupRun).stdout);
  const backupEnd = Date.now();
  const server = await watching();
  log(
    `backup ended after ${s(backupEnd - backupStart)} s: ${backupOut.files} files, ${backupOut.bytes} bytes`,
  );
  // Load after the end as long as before the start, and at least 5 s: writes that must be missing.
  await pause(Math.max(loadStart + SECONDS * 1000, backupEnd + 5000) - Date.now());
  const loadEnd = Date.now();
  await load.stop();
  log('load stopped; every write answered');
  const original = await present(liveDb);
  await liveDb.end();
  await stop(live.service);

  const restoreStart = Date.now();
  const restoreOut = await run(process.execPath, [MAIN, 'restore', archive, '--json'], {
    env: { ...liveEnv, TAGTRAIL_DATA_DIR: restoredDir },
  });
  const restoreEnd = Date.now();
  log(`restored in ${s(restoreEnd - restoreStart)} s: ${JSON.parse(restoreOut.stdout).files} files`);
  hooks.seen.phase = 'restored';
  const restored = await serve(envFor(restoredDir, PORTS.restoredApi, PORTS.restoredMqtt));
  const restoredUp = Date.now();
  log(`restored service up after ${s(restoredUp - restoreEnd)} s`);
  const db = new pg.Pool({ connectionString: await embeddedUrl(restoredDir), max: 2 });
  // Leased at the first look: the restored service's own claims (those of the original service's
  // worker, taken before the backup, it released at its start: docs/operations.md).
  const { rows: first } = await db.query(
    `SELECT count(*)::int AS pending, count(*) FILTER (WHERE leased_until > now())::int AS leased
       FROM webhook_deliveries WHERE state = 'pending'`,
  );
  const held = await present(db);
  const counters = await counterMismatches(db);
  let pendingLeft = first[0].pending;
  const settleBy = Date.now() + 120_000;
  while (Date.now() < settleBy) {
    const { rows } = await db.query(
      "SELECT count(*) FILTER (WHERE state = 'pending') AS pending, count(*) FILTER (WHERE state = 'failed') AS failed FROM webhook_deliveries",
    );
    pendingLeft = Number(rows[0].pending) + Number(rows[0].failed);
    if (pendingLeft === 0) break;
    await pause(500);
  }
  await db.end();
  await stop(restored.service);

  report({
    ledger,
    original,
    held,
    counters,
    readers: load.readers,
    pending: {
      first: first[0].pending,
      leased: first[0].leased,
      left: pendingLeft,
      lastAt: hooks.seen.restored.size > 0 && hooks.seen.lastAt,
    },
    times: { loadStart, loadEnd, backupStart, backupEnd, server, restoreStart, restoreEnd, restoredUp },
    backupOut,
  });
  ok = broken.length === 0;
} finally {
  for (const service of running) await stop(service);
  hooks.server.close();
  if (ok && !args.keep) await rm(workDir, { recursive: true, force: true });
  else log(`kept ${workDir}`);
}
if (!ok) {
  console.log(`\nBROKEN: ${broken.join('; ') || 'the drill did not finish'}`);
  process.exit(1);
}

function report({ ledger, original, held, counters, readers, pending, times, backupOut }) {
  const t = times;
  const loadSeconds = (t.loadEnd - t.loadStart) / 1000;
  const perSecond = (kind) => (ledger.count(kind) / loadSeconds).toFixed(0);
  const stopAt = t.server.stop ?? t.backupEnd;
  const acked = [...ledger.acks];
  const lost = acked.filter(([id]) => !original.has(id)).length;
  const beforeCommand = acked.filter(([, at]) => at < t.backupStart);
  const beforeStop = acked.filter(([, at]) => at < stopAt);
  const during = acked.filter(([, at]) => at >= t.backupStart && at <= t.backupEnd);
  const after = acked.filter(([, at]) => at > t.backupEnd);
  const missing = (list) => list.filter(([id]) => !held.has(id)).length;
  const duringHeld = during.filter(([id]) => held.has(id));
  const latest = Math.max(...duringHeld.map(([, at]) => at));
  const afterHeld = after.filter(([id]) => held.has(id)).length;
  const afterStop = during.filter(([, at]) => at >= stopAt);
  const afterStopHeld = afterStop.filter(([id]) => held.has(id)).length;
  const rel = (at) => `${s(at - t.backupStart)} s`;

  console.log(
    `tagtrail restore drill: ${s(t.loadEnd - t.loadStart)} s of load, ${args.assets} assets in each of 2 organizations; node ${process.version}\n`,
  );
  console.log(
    `load        ${(ledger.acks.size / loadSeconds).toFixed(0)} acknowledged writes/s: ${perSecond('api')} API asset creations, ` +
      `${perSecond('mqtt')} MQTT messages (QoS 1), ${perSecond('webhook')} reader-webhook messages; ` +
      `${ledger.failed + readers.failed} refused or failed (not counted)`,
  );
  console.log(
    `backup      ${s(t.backupEnd - t.backupStart)} s (${backupOut.files} files, ${(backupOut.bytes / 1e6).toFixed(1)} MB); ` +
      `pg_backup_start at ${t.server.start ? rel(t.server.start) : '(not seen)'}, pg_backup_stop at ${t.server.stop ? rel(t.server.stop) : '(not seen)'}, ` +
      `the command ended at ${rel(t.backupEnd)}`,
  );
  console.log(
    `restore     ${s(t.restoreEnd - t.restoreStart)} s; the restored service answered ${s(t.restoredUp - t.restoreEnd)} s later`,
  );
  console.log(
    `\noriginal    ${acked.length} acknowledged, ${lost} of them missing at the end: ${promise(lost === 0, 'acknowledged writes missing from the original service')}`,
  );
  console.log(
    `before      ${beforeCommand.length} acknowledged before the command started, ${missing(beforeCommand)} missing: ` +
      promise(missing(beforeCommand) === 0, 'writes acknowledged before the backup started are missing'),
  );
  console.log(
    `            ${beforeStop.length} acknowledged before pg_backup_stop began, ${missing(beforeStop)} missing: ` +
      promise(missing(beforeStop) === 0, 'writes acknowledged before pg_backup_stop are missing'),
  );
  console.log(
    `during      ${during.length} acknowledged while it ran, ${duringHeld.length} restored; the latest restored was ` +
      (duringHeld.length ? `acknowledged ${s(t.backupEnd - latest)} s before the command ended` : 'none') +
      `; of the ${afterStop.length} acknowledged from pg_backup_stop on, ${afterStopHeld} restored`,
  );
  console.log(
    `after       ${after.length} acknowledged after it ended, ${afterHeld} restored: ` +
      promise(afterHeld === 0, 'writes acknowledged after the backup ended were restored'),
  );
  const mismatched = counters.mismatched.map(
    (r) => `reader ${r.id}: ${r.counted} counted, ${r.logged} logged`,
  );
  console.log(
    `counters    ${counters.readers} readers, ${counters.mismatched.length} whose counters differ from the raw log: ` +
      `${promise(mismatched.length === 0, `reader counters differ (${mismatched.join(', ')})`)}`,
  );
  console.log(
    `webhooks    ${pending.first} deliveries pending at the first look after the restored service started ` +
      `(${pending.leased} leased, by the restored service's worker); it sent ` +
      `${hooks.seen.restored.size}, ${hooks.seen.again} of them sent by the original service before, the last ` +
      `${pending.lastAt ? `${s(pending.lastAt - t.restoredUp)} s after it started (${s(pending.lastAt - t.backupEnd)} s after the backup)` : '-'}; ` +
      `${pending.left} left pending or failed: ${promise(pending.left === 0, 'pending webhook deliveries were not sent after the restore')}`,
  );
}
