/**
 * GET /metrics of a running service (embedded PostgreSQL database of the test, embedded
 * broker): access control, and series that move with HTTP requests and reader messages,
 * read back through a Prometheus text-format parser.
 */
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import type { RunningService } from '../../src/runtime.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { buildFacts } from '../helpers/build-facts.js';
import { Scrape } from '../helpers/prometheus.js';
import { startTestService } from '../helpers/service.js';
import { genericJson, ingestFixture, publisher, waitFor } from '../ingest/helpers.js';

const TOKEN = 'metrics-test-token-0123456789';

describe('GET /metrics', () => {
  let t: TestApp;
  let running: RunningService;
  const clients: MqttClient[] = [];

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${running.url}${path}`, { headers });
  const scrape = async () => {
    const res = await get('/metrics', bearer(TOKEN));
    expect(res.status).toBe(200);
    return Scrape.parse(await res.text());
  };

  beforeAll(async () => {
    t = await buildTestApp();
    running = await startTestService({ DATABASE_URL: t.database.url, TAGTRAIL_METRICS_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => undefined)));
    await running?.stop();
    await t?.close();
  });

  it('is off without TAGTRAIL_METRICS_TOKEN: 404, and 405 for other methods', async () => {
    const off = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(off.statusCode).toBe(404);
    expect(off.json().error.type).toBe('not_found');
    expect(off.json().error.detail).toContain('TAGTRAIL_METRICS_TOKEN');
    const post = await t.app.inject({ method: 'POST', url: '/metrics' });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('asks for the bearer token: 401 without it or with another, 200 with it', async () => {
    for (const headers of [{}, bearer('metrics-test-token-9876543210'), { authorization: TOKEN }]) {
      const res = await get('/metrics', headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe('unauthorized');
    }
    const ok = await get('/metrics', bearer(TOKEN));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    // The endpoint is not part of the API's description.
    const openapi = (await (await get('/api/openapi.json')).json()) as { paths: object };
    expect(Object.keys(openapi.paths)).not.toContain('/metrics');
  });

  it('names the build each instance runs: its version and newest migration', async () => {
    const { version, schema } = await buildFacts();
    const series = await scrape();
    expect(series.value('tagtrail_build_info', { version, schema })).toBe(1);
  });

  it('counts HTTP requests by route pattern and status, with their durations', async () => {
    const f = await ingestFixture(t);
    const before = await scrape();
    const route = { method: 'GET', route: '/api/v1/assets/:asset_id', status: '404' };
    for (const id of [900001, 900002, 900003]) {
      expect((await get(`/api/v1/assets/${id}`, bearer(f.token))).status).toBe(404);
    }
    expect((await get('/api/v1/no-such-thing/1', bearer(f.token))).status).toBe(404);
    const after = await scrape();

    expect(after.type('tagtrail_http_request_duration_seconds')).toBe('histogram');
    const series = after.histogram('tagtrail_http_request_duration_seconds', route);
    expect(series.count - before.histogram('tagtrail_http_request_duration_seconds', route).count).toBe(3);
    expect(series.sum).toBeGreaterThan(0);
    // A URL no route matches is one series, not one per URL.
    const unmatched = { method: 'GET', route: '(unmatched)', status: '404' };
    expect(
      after.histogram('tagtrail_http_request_duration_seconds', unmatched).count -
        before.histogram('tagtrail_http_request_duration_seconds', unmatched).count,
    ).toBe(1);
    for (const [name, labels] of Object.entries(after.families)) {
      if (name !== 'tagtrail_http_request_duration_seconds') continue;
      for (const d of labels.data) expect(d.labels.route).not.toMatch(/9000\d\d/);
    }
    // The database pool and Node's own series are there too.
    expect(after.type('tagtrail_db_pool_waiting_clients')).toBe('gauge');
    expect(after.type('tagtrail_db_transaction_retries_total')).toBe('counter');
    expect(after.value('tagtrail_db_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(after.has('tagtrail_db_pool_idle_connections')).toBe(true);
    expect(after.type('process_cpu_user_seconds_total')).toBe('counter');
    // Live event streams (test/events/live-observed.test.ts): none open here.
    expect(after.type('tagtrail_http_open_streams')).toBe('gauge');
    expect(after.has('tagtrail_http_open_streams')).toBe(true);
    expect(after.value('tagtrail_http_open_streams')).toBe(0);
    expect(after.type('tagtrail_http_stream_duration_seconds')).toBe('histogram');
  });

  it('counts reads ingested, rejected and unknown by family, messages, latency, batch size and connected readers', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    await f.asset('E2000000000000000000B001');
    const { reader, topic, mqtt } = await f.reader('generic-json', [[1, dock]]);
    await running.ingest.serving(topic);
    const before = await scrape();
    const client = await publisher(running.mqttUrl, { login: mqtt });
    clients.push(client);

    const payload = genericJson([
      ['E2000000000000000000B001', 1, null], // ingested
      ['E2000000000000000000B001', 7, null], // no scan point for antenna 7: rejected
      ['E2000000000000000000FFFF', 1, null], // no such tag: unknown
      ['E2000000000000000000FFFE', 1, null], // unknown
    ]);
    await client.publishAsync(topic, payload, { qos: 1 });
    await waitFor(
      () => f.readerCounters(reader.id),
      (c) => c.good + c.bad + c.unknown === 4,
    );
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);

    expect(after.type('tagtrail_ingest_reads_total')).toBe('counter');
    const reads = (outcome: string) =>
      delta('tagtrail_ingest_reads_total', { family: 'generic-json', outcome });
    expect([reads('ingested'), reads('rejected'), reads('unknown')]).toEqual([1, 1, 2]);
    expect(delta('tagtrail_ingest_messages_total', { family: 'generic-json', source: 'mqtt' })).toBe(1);
    const hist = (name: string, labels: Record<string, string> = {}) => ({
      count: after.histogram(name, labels).count - before.histogram(name, labels).count,
      sum: after.histogram(name, labels).sum - before.histogram(name, labels).sum,
    });
    expect(hist('tagtrail_ingest_message_latency_seconds', { source: 'mqtt' }).count).toBe(1);
    // One transaction: the message's tags fall in one lane, or in several that were idle
    // and it is stored whole across them (GroupCommit.tryAcross); docs/ingest.md.
    const transactions = 1;
    expect(hist('tagtrail_ingest_batch_duration_seconds').count).toBe(transactions);
    expect(hist('tagtrail_ingest_batch_messages')).toEqual({ count: transactions, sum: 1 });
    expect(hist('tagtrail_ingest_batch_reads')).toEqual({ count: transactions, sum: 4 });
    expect(after.value('tagtrail_ingest_messages_failed_total', { family: 'generic-json' })).toBe(0);

    // The reader is logged in to the embedded broker; it counts until it disconnects.
    expect(after.type('tagtrail_broker_connected_readers')).toBe('gauge');
    expect(after.value('tagtrail_broker_connected_readers')).toBeGreaterThanOrEqual(1);
    await client.endAsync();
    const gone = await waitFor(
      () => scrape(),
      (s) =>
        s.value('tagtrail_broker_connected_readers') === after.value('tagtrail_broker_connected_readers') - 1,
    );
    expect(gone.has('tagtrail_mqtt_consumer_connected')).toBe(false);
    // No TLS listener here: no certificate series rather than a misleading value.
    expect(gone.has('tagtrail_tls_certificate_expiry_timestamp_seconds')).toBe(false);
  });

  it('counts every malformed item of a message as rejected, past the 100 errors kept', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    await f.asset('E2000000000000000000B201');
    const { reader, topic, mqtt } = await f.reader('generic-json', [[null, dock]]);
    await running.ingest.serving(topic);
    const client = await publisher(running.mqttUrl, { login: mqtt });
    clients.push(client);
    const before = await scrape();
    const bad = Array.from({ length: 150 }, () => ['zz', 1, null] as [string, number, null]);
    const payload = genericJson([...bad, ['E2000000000000000000B201', 1, null]]);
    await client.publishAsync(topic, payload, { qos: 1 });
    expect(await f.readerCounters(reader.id)).toEqual({ good: 1, bad: 150, unknown: 0 });
    const [row] = await f.rawMessages(reader.id);
    expect(row).toMatchObject({ good_reads: 1, bad_reads: 150, unknown_reads: 0 });
    // Only the list stops: the first 100 errors, then a line counting the rest.
    expect(row!.errors).toHaveLength(101);
    expect(row!.errors![99]).toMatch(/^read 100: /);
    expect(row!.errors![100]).toBe('50 further errors not shown');
    const after = await scrape();
    const reads = (outcome: string) =>
      after.value('tagtrail_ingest_reads_total', { family: 'generic-json', outcome }) -
      before.value('tagtrail_ingest_reads_total', { family: 'generic-json', outcome });
    expect([reads('ingested'), reads('rejected')]).toEqual([1, 150]);
  });

  it("reports the event dispatcher's backlog: the events waiting and the oldest one's age", async () => {
    // Holding the dispatcher's lock stops it (it tries the lock and waits for the next turn).
    const blocker = await t.database.db.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query("SELECT pg_advisory_xact_lock(hashtext('tagtrail.events.dispatch'))");
      const org = await t.createOrg('backlog');
      for (const name of ['A', 'B', 'C']) await t.services.assets.create(cliCaller(org.id), { name });
      const waiting = await waitFor(
        () => scrape(),
        (s) => s.value('tagtrail_events_undispatched') >= 3,
      );
      expect(waiting.type('tagtrail_events_undispatched')).toBe('gauge');
      expect(waiting.value('tagtrail_events_undispatched_oldest_seconds')).toBeGreaterThan(0);
      await blocker.query('COMMIT');
    } finally {
      blocker.release();
    }
    const drained = await waitFor(
      () => scrape(),
      (s) => s.value('tagtrail_events_undispatched') === 0,
    );
    expect(drained.has('tagtrail_events_undispatched')).toBe(true);
    expect(drained.value('tagtrail_events_undispatched_oldest_seconds')).toBe(0);
  });

  it('counts a redelivered message apart, and not as a message or its reads again', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    await f.asset('E2000000000000000000B101');
    const { reader, topic, mqtt } = await f.reader('generic-json', [[null, dock]]);
    await running.ingest.serving(topic);
    const client = await publisher(running.mqttUrl, { login: mqtt });
    clients.push(client);
    const before = await scrape();
    const payload = genericJson([
      ['E2000000000000000000B101', 1, new Date(Date.now() - 1_000).toISOString()],
    ]);
    // The embedded broker acknowledges once the message is stored (or recognised and skipped).
    await client.publishAsync(topic, payload, { qos: 1 });
    await client.publishAsync(topic, payload, { qos: 1 });
    expect(await f.readerCounters(reader.id)).toEqual({ good: 1, bad: 0, unknown: 0 });
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);
    const labels = { family: 'generic-json', source: 'mqtt' };
    expect(after.type('tagtrail_ingest_redeliveries_total')).toBe('counter');
    expect(delta('tagtrail_ingest_redeliveries_total', labels)).toBe(1);
    expect(delta('tagtrail_ingest_messages_total', labels)).toBe(1);
    expect(delta('tagtrail_ingest_reads_total', { family: 'generic-json', outcome: 'ingested' })).toBe(1);
  });

  it('counts a webhook message that could not be stored as failed, with its family and source', async () => {
    const f = await ingestFixture(t);
    const dock = await f.location();
    await f.asset('E2000000000000000000B301');
    const { reader, secret } = await f.reader('impinj-r700', [[null, dock]], { webhook: true });
    // Booking the message (its reader's counters) fails as it would with a grant taken away
    // (SQLSTATE class 42): a failure that may pass another time, so the message is refused.
    const pool = t.database.db.pool;
    await pool.query(`CREATE FUNCTION refuse_reader_${reader.id}() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION 'no booking in this test' USING ERRCODE = '42501'; END $$`);
    await pool.query(`CREATE TRIGGER refuse_reader_${reader.id} BEFORE UPDATE ON readers FOR EACH ROW
      WHEN (NEW.id = ${reader.id}) EXECUTE FUNCTION refuse_reader_${reader.id}()`);
    const labels = { family: 'impinj-r700', source: 'webhook' };
    const before = await scrape();
    try {
      const res = await fetch(`${running.url}/ingest/v1/readers/${reader.id}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify([
          {
            timestamp: new Date().toISOString(),
            eventType: 'tagInventory',
            tagInventoryEvent: { epcHex: 'E2000000000000000000B301', antennaPort: 1 },
          },
        ]),
      });
      expect(res.status).toBe(500);
    } finally {
      await pool.query(`DROP TRIGGER refuse_reader_${reader.id} ON readers`);
      await pool.query(`DROP FUNCTION refuse_reader_${reader.id}()`);
    }
    const after = await scrape();
    expect(
      after.value('tagtrail_ingest_messages_failed_total', labels) -
        before.value('tagtrail_ingest_messages_failed_total', labels),
    ).toBe(1);
    expect(after.value('tagtrail_ingest_messages_total', labels)).toBe(
      before.value('tagtrail_ingest_messages_total', labels),
    );
    expect(await f.readerCounters(reader.id)).toEqual({ good: 0, bad: 0, unknown: 0 });
  });
});
