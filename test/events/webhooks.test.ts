/**
 * Webhook delivery (docs/events.md): signed, at least once, retried with the same id, in
 * order per asset, nothing lost across a crash, nothing sent for a rollback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { EventsRuntime } from '../../src/events/runtime.js';
import { verifySignature } from '../../src/events/signing.js';
import { WebhookService } from '../../src/events/webhook-service.js';
import { SecretBox } from '../../src/secrets/secret-box.js';
import { storeSightings } from '../../src/tracking/sightings.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { TEST_SECRET_KEY, TEST_SECRETS } from '../helpers/secrets.js';
import { ingestFixture, unique, waitFor } from '../ingest/helpers.js';
import { type Received, startReceiver } from './receiver.js';

/** Fast retries so a test sees several attempts; everything else as in production. */
const FAST = {
  dispatchPollMs: 20,
  delivery: { retryBaseMs: 50, retryMaxMs: 200, timeoutMs: 2_000, pollMs: 25, allowPrivate: true },
};

let t: TestApp;
let webhooks: WebhookService;
const runtimes: EventsRuntime[] = [];
const closers: Array<() => Promise<void>> = [];

function runtime(): EventsRuntime {
  const r = new EventsRuntime(t.database.db, TEST_SECRETS, FAST);
  runtimes.push(r);
  r.start((err) => console.error(err));
  return r;
}

beforeAll(async () => {
  t = await buildTestApp({ allowPrivateWebhooks: true });
  webhooks = new WebhookService(t.database.db, TEST_SECRETS, { allowPrivate: true });
});
afterAll(async () => {
  for (const r of runtimes) await r.stop();
  for (const close of closers) await close();
  await t?.close();
});

async function receiver(answer?: Parameters<typeof startReceiver>[0]) {
  const r = await startReceiver(answer);
  closers.push(r.close);
  return r;
}

const parsed = (r: Received) =>
  JSON.parse(r.body) as { id: string; type: string; data: Record<string, unknown> };

async function scene() {
  const f = await ingestFixture(t);
  const dock = await f.location();
  const shelf = await f.location();
  const asset = await f.asset(unique('T'));
  const handheld = (location: number, at: number) =>
    t.services.ingest.records(
      f.orgId,
      [{ observedAt: at, asset: { id: asset }, location: { id: location } }],
      'handheld',
      '{}',
    );
  return { f, dock, shelf, asset, handheld };
}

describe('saving an endpoint', () => {
  it('refuses a name resolving to a private address, on create and on update, with invalid_value on url', async () => {
    const f = await ingestFixture(t);
    const guarded = new WebhookService(t.database.db, TEST_SECRETS, {
      allowPrivate: false,
      resolve: async (host) => (host === 'inside.example.test' ? ['10.9.8.7'] : ['93.184.216.34']),
    });
    const refused = { fields: [expect.objectContaining({ field: 'url', code: 'invalid_value' })] };
    await expect(
      guarded.create(f.orgId, { url: 'https://inside.example.test/hook', event_types: ['asset.moved'] }),
    ).rejects.toMatchObject(refused);
    const { endpoint } = await guarded.create(f.orgId, {
      url: 'https://outside.example.test/hook',
      event_types: ['asset.moved'],
    });
    await expect(
      guarded.update(f.orgId, endpoint.id, { url: 'https://inside.example.test/hook' }),
    ).rejects.toMatchObject(refused);
    expect((await guarded.list(f.orgId)).map((e) => e.url)).toEqual(['https://outside.example.test/hook']);
  });
});

describe('webhook delivery', () => {
  it('an asset.moved from a handheld submission reaches the receiver signed with the endpoint secret', async () => {
    runtime();
    const { f, dock, shelf, asset, handheld } = await scene();
    const rx = await receiver();
    const { secret } = await webhooks.create(f.orgId, { url: rx.url, event_types: ['asset.moved'] });
    const base = Date.now() - 10_000;
    await handheld(dock, base);
    await handheld(shelf, base + 1000);
    await waitFor(
      async () => rx.received.length,
      (n) => n >= 1,
    );
    const [got] = rx.received as [Received];
    expect(verifySignature(secret, got.headers, got.body)).toBe(true);
    expect(verifySignature(secret, got.headers, `${got.body} `)).toBe(false);
    expect(got.headers['webhook-id']).toBe(parsed(got).id);
    expect(parsed(got)).toMatchObject({
      type: 'asset.moved',
      organization_id: f.orgId,
      data: { asset_id: asset, from_location_id: dock, location_id: shelf, source: { type: 'handheld' } },
    });
    // first_seen was not subscribed to: only the move came.
    expect(rx.received).toHaveLength(1);
  });

  it('a receiver failing 3 times then recovering gets every event, retried with the same id', async () => {
    runtime();
    const { f, dock, shelf, handheld } = await scene();
    const rx = await receiver((n) => (n < 3 ? 503 : 200));
    await webhooks.create(f.orgId, { url: rx.url, event_types: ['asset.moved', 'asset.first_seen'] });
    const base = Date.now() - 10_000;
    await handheld(dock, base);
    await handheld(shelf, base + 1000);
    await handheld(dock, base + 2000);
    const ok = await waitFor(
      async () => rx.received.filter((r) => r.status === 200).map((r) => r.headers['webhook-id']),
      (ids) => ids.length >= 3,
    );
    const { rows } = await t.database.db.pool.query<{ id: number }>(
      'SELECT id FROM events WHERE org_id = $1 ORDER BY id',
      [f.orgId],
    );
    expect(ok).toEqual(rows.map((r) => `evt_${r.id}`));
    // The failures were the same first event, sent again under its id.
    const failed = rx.received.filter((r) => r.status === 503).map((r) => r.headers['webhook-id']);
    expect(failed).toEqual([ok[0], ok[0], ok[0]]);
    // The receiver records a request before its answer reaches the worker, which then marks
    // the delivery: the log catches up a moment after the third 200.
    const endpointId = (await webhooks.list(f.orgId))[0]!.id;
    const log = await waitFor(
      () => webhooks.deliveries(f.orgId, endpointId, { limit: 10, offset: 0 }),
      (l) => l.rows.length === 3 && l.rows.every((d) => d.state === 'delivered'),
    );
    expect(log.rows.map((d) => [d.state, d.attempts, d.last_status])).toEqual([
      ['delivered', 1, 200],
      ['delivered', 1, 200],
      ['delivered', 4, 200],
    ]);
  });

  it('events committed while no worker runs (a crash after commit) are all delivered once one starts', async () => {
    const { f, dock, shelf, handheld } = await scene();
    const rx = await receiver();
    await webhooks.create(f.orgId, { url: rx.url, event_types: ['asset.moved', 'asset.first_seen'] });
    // Stop every worker: the process "crashes" after ingest committed.
    for (const r of runtimes.splice(0)) await r.stop();
    const base = Date.now() - 10_000;
    await handheld(dock, base);
    await handheld(shelf, base + 1000);
    runtime();
    await waitFor(
      async () => rx.received.length,
      (n) => n >= 2,
    );
    expect(rx.received.map((r) => parsed(r).type)).toEqual(['asset.first_seen', 'asset.moved']);
  });

  it('a delivery leased by a worker that died is sent by another once the lease runs out', async () => {
    for (const r of runtimes.splice(0)) await r.stop();
    const { f, dock, handheld } = await scene();
    const rx = await receiver();
    await webhooks.create(f.orgId, { url: rx.url, event_types: ['asset.first_seen'] });
    await handheld(dock, Date.now() - 1000);
    const { dispatchEvents } = await import('../../src/events/dispatcher.js');
    while ((await dispatchEvents(t.database.db)) > 0);
    // The dead worker's lease: taken, never completed.
    await t.database.db.pool.query(
      "UPDATE webhook_deliveries SET leased_until = now() + interval '300 ms' WHERE org_id = $1",
      [f.orgId],
    );
    runtime();
    await waitFor(
      async () => rx.received.length,
      (n) => n >= 1,
    );
    expect(parsed(rx.received[0]!).type).toBe('asset.first_seen');
  });

  it('a rolled-back change sends nothing', async () => {
    runtime();
    const { f, dock, shelf, asset, handheld } = await scene();
    const rx = await receiver();
    await webhooks.create(f.orgId, { url: rx.url, event_types: ['asset.moved', 'asset.first_seen'] });
    await expect(
      t.database.db.withOrg(f.orgId, async (tx) => {
        await storeSightings(tx, f.orgId, [{ assetId: asset, locationId: shelf, at: Date.now() - 5000 }]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // A committed change after it: once it has arrived, the rolled-back one would have too.
    await handheld(dock, Date.now() - 1000);
    await waitFor(
      async () => rx.received.length,
      (n) => n >= 1,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(rx.received.map((r) => [parsed(r).type, parsed(r).data.location_id])).toEqual([
      ['asset.first_seen', dock],
    ]);
  });

  it('per-asset order holds under concurrent reads and a slow, sometimes failing receiver', async () => {
    runtime();
    const f = await ingestFixture(t);
    const places = [await f.location(), await f.location(), await f.location()];
    const assets = [await f.asset(unique('T')), await f.asset(unique('T')), await f.asset(unique('T'))];
    const rx = await receiver(async (n) => {
      await new Promise((resolve) => setTimeout(resolve, n % 7));
      return n % 5 === 2 ? 500 : 200;
    });
    await webhooks.create(f.orgId, { url: rx.url, event_types: ['asset.moved', 'asset.first_seen'] });
    const base = Date.now() - 120_000;
    // 30 submissions per asset, sent 6 at a time: each asset hops between the three places.
    const jobs = assets.flatMap((asset, a) =>
      Array.from(
        { length: 30 },
        (_, i) => () =>
          t.services.ingest.records(
            f.orgId,
            [
              {
                observedAt: base + i * 1000 + a,
                asset: { id: asset },
                location: { id: places[(i + a) % 3]! },
              },
            ],
            'handheld',
            '{}',
          ),
      ),
    );
    for (let i = 0; i < jobs.length; i += 6) await Promise.all(jobs.slice(i, i + 6).map((job) => job()));
    const { rows } = await t.database.db.pool.query<{ id: number; subject: string }>(
      'SELECT id, subject FROM events WHERE org_id = $1 ORDER BY id',
      [f.orgId],
    );
    await waitFor(
      async () =>
        new Set(rx.received.filter((r) => r.status === 200).map((r) => r.headers['webhook-id'])).size,
      (n) => n >= rows.length,
      30_000,
    );
    for (const asset of assets) {
      const expected = rows.filter((r) => r.subject === `asset:${asset}`).map((r) => `evt_${r.id}`);
      // Every attempt (failed ones included) came in event order for this asset.
      const attempts = rx.received
        .filter((r) => parsed(r).data.asset_id === asset)
        .map((r) => r.headers['webhook-id'] as string);
      const firstSeen = attempts.filter((id, i) => attempts.indexOf(id) === i);
      expect(firstSeen).toEqual(expected);
      const ids = attempts.map((id) => Number(id.slice(4)));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }
  });

  it('an endpoint filtered to a subtree gets only the events under its root', async () => {
    runtime();
    const org = await t.createOrg(unique('tree'));
    const site = await t.services.locations.create(cliCaller(org.id), { name: 'Site' });
    const dock = await t.services.locations.create(cliCaller(org.id), { name: 'Dock', parent_id: site.id });
    const other = await t.services.locations.create(cliCaller(org.id), { name: 'Elsewhere' });
    const rx = await receiver();
    await webhooks.create(org.id, { url: rx.url, event_types: ['location.updated'], location_id: site.id });
    await t.services.locations.update(cliCaller(org.id), other.id, { name: 'Elsewhere 2' });
    await t.services.locations.update(cliCaller(org.id), dock.id, { name: 'Dock 2' });
    await waitFor(
      async () => rx.received.length,
      (n) => n >= 1,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(rx.received.map((r) => parsed(r).data.id)).toEqual([dock.id]);
  });

  it('an endpoint failing for longer than the bound is disabled with the reason', async () => {
    const r = new EventsRuntime(t.database.db, TEST_SECRETS, {
      ...FAST,
      delivery: { ...FAST.delivery, disableAfterMs: 300, retryWindowMs: 60_000 },
    });
    runtimes.push(r);
    r.start();
    const { f, dock, handheld } = await scene();
    const rx = await receiver(() => 500);
    const { endpoint } = await webhooks.create(f.orgId, { url: rx.url, event_types: ['asset.first_seen'] });
    await handheld(dock, Date.now() - 1000);
    const disabled = await waitFor(
      async () => (await webhooks.list(f.orgId))[0]!,
      (e) => !e.enabled,
      20_000,
    );
    expect(disabled.id).toBe(endpoint.id);
    expect(disabled.disabled_reason).toMatch(
      /^Disabled automatically: every delivery failed since .*; last error: HTTP 500$/,
    );
    const log = await webhooks.deliveries(f.orgId, endpoint.id, { limit: 10, offset: 0 });
    expect(log.rows[0]).toMatchObject({ state: 'pending', last_status: 500, last_error: 'HTTP 500' });
    expect(log.rows[0]!.attempts).toBeGreaterThanOrEqual(2);
  });

  it('manual redelivery sends a delivered event again under the same id', async () => {
    runtime();
    const { f, dock, handheld } = await scene();
    const rx = await receiver();
    const { endpoint } = await webhooks.create(f.orgId, { url: rx.url, event_types: ['asset.first_seen'] });
    await handheld(dock, Date.now() - 1000);
    await waitFor(
      async () => rx.received.length,
      (n) => n >= 1,
    );
    const log = await waitFor(
      () => webhooks.deliveries(f.orgId, endpoint.id, { limit: 10, offset: 0 }),
      (l) => l.rows[0]?.state === 'delivered',
    );
    webhooks = new WebhookService(t.database.db, TEST_SECRETS, {
      allowPrivate: true,
      wake: () => runtimes.at(-1)?.wake(),
    });
    await webhooks.redeliver(f.orgId, endpoint.id, log.rows[0]!.id);
    await waitFor(
      async () => rx.received.length,
      (n) => n >= 2,
    );
    expect(rx.received[1]!.headers['webhook-id']).toBe(rx.received[0]!.headers['webhook-id']);
  });

  it('a secret sealed under a key this instance lacks is never used: the attempt fails and waits for one that has it', async () => {
    const otherKey = Buffer.alloc(32, 0x42);
    // The earlier cases' runtimes stop: one of them disables an endpoint after a short failure.
    for (const r of runtimes.splice(0)) await r.stop();
    const lacking = runtime();
    const { f, dock, handheld } = await scene();
    const rx = await receiver();
    const sealedElsewhere = new WebhookService(t.database.db, new SecretBox([otherKey]), {
      allowPrivate: true,
    });
    const { endpoint, secret } = await sealedElsewhere.create(f.orgId, {
      url: rx.url,
      event_types: ['asset.first_seen'],
    });
    await handheld(dock, Date.now() - 1000);
    const log = await waitFor(
      () => webhooks.deliveries(f.orgId, endpoint.id, { limit: 10, offset: 0 }),
      (l) => (l.rows[0]?.attempts ?? 0) >= 1,
    );
    expect(log.rows[0]).toMatchObject({ state: 'pending', last_error: 'signing secret unavailable' });
    expect(rx.received).toHaveLength(0);

    await lacking.stop();
    const having = new EventsRuntime(t.database.db, new SecretBox([otherKey, TEST_SECRET_KEY]), FAST);
    runtimes.push(having);
    having.start();
    await waitFor(
      async () => rx.received.length,
      (n) => n >= 1,
    );
    const [got] = rx.received as [Received];
    expect(verifySignature(secret, got.headers, got.body)).toBe(true);
  });
});
