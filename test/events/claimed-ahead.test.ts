/**
 * Deliveries a worker claimed ahead of their send (docs/events.md, "Isolation": up to 64 per
 * endpoint) follow what happens to their endpoint meanwhile: removed or disabled, the rest
 * are not sent; moved to another URL, they go there. The one send in flight finishes.
 */
import type { QueryResultRow } from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DELIVERY_POLICY, DeliveryWorker } from '../../src/events/delivery-worker.js';
import { dispatchEvents } from '../../src/events/dispatcher.js';
import { WebhookService } from '../../src/events/webhook-service.js';
import { createTestDatabase, insertOrganization, type TestDatabase } from '../helpers/database.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import { waitFor } from '../ingest/helpers.js';
import { startReceiver } from './receiver.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('deliveries claimed ahead', () => {
  let database: TestDatabase;
  let webhooks: WebhookService;
  let orgId: number;
  let worker: DeliveryWorker | undefined;
  const closers: Array<() => Promise<void>> = [];

  const q = <T extends object = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    database.db.pool.query<T & QueryResultRow>(sql, params).then((r) => r.rows);

  /** A receiver that holds its first request until `open()`; the others are answered at once. */
  async function heldReceiver() {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let arrived = 0;
    const r = await startReceiver(async (n) => {
      arrived++;
      if (n === 0) await gate;
      return 204;
    });
    closers.push(r.close);
    return { ...r, open, arrived: () => arrived };
  }

  /** Lets the held send finish, then finds that nothing more reached the receiver. */
  async function onlyTheHeldOneSent(held: Awaited<ReturnType<typeof heldReceiver>>): Promise<void> {
    held.open();
    await waitFor(
      async () => held.received.length,
      (n) => n === 1,
    );
    await sleep(300); // a dozen polls: each would have sent the next
    expect(held.arrived()).toBe(1);
  }

  /** An endpoint with `n` deliveries claimed by a worker that sends one at a time, the first held. */
  async function claimedAhead(n: number) {
    const held = await heldReceiver();
    const endpoint = (await webhooks.create(orgId, { url: held.url, event_types: ['asset.created'] }))
      .endpoint.id;
    await q(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       SELECT $1, 'asset.created', now(), 'asset:' || $3 || ':' || g, '{}' FROM generate_series(1, $2) g`,
      [orgId, n, endpoint],
    );
    await dispatchEvents(database.db);
    worker = new DeliveryWorker(database.db, TEST_SECRETS, {
      ...DEFAULT_DELIVERY_POLICY,
      allowPrivate: true,
      perEndpoint: 1,
      prefetch: 64,
      pollMs: 25,
    });
    worker.start();
    await waitFor(
      async () => held.arrived(),
      (a) => a === 1,
    );
    const leased = await q<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND leased_until > now()',
      [endpoint],
    );
    expect(leased[0]!.n).toBe(n);
    return { held, endpoint };
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    webhooks = new WebhookService(database.db, TEST_SECRETS, { allowPrivate: true });
    orgId = await insertOrganization(database.db, 'Claims ahead');
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await database?.drop();
  });

  it('sends none of the rest once the endpoint is removed', async () => {
    const { held, endpoint } = await claimedAhead(5);
    await webhooks.remove(orgId, endpoint);
    await sleep(300); // the removal reaches the worker at its next claim, within a poll
    await onlyTheHeldOneSent(held);
  });

  it('sends none of the rest while the endpoint is disabled, and all of them once enabled', async () => {
    const { held, endpoint } = await claimedAhead(4);
    await webhooks.update(orgId, endpoint, { enabled: false });
    // Dropped here and released: not left leased for the minute and a half of a lease.
    await waitFor(
      async () =>
        (
          await q<{ n: number }>(
            'SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND leased_until IS NULL',
            [endpoint],
          )
        )[0]!.n,
      (n) => n === 3,
    );
    await onlyTheHeldOneSent(held);

    await webhooks.update(orgId, endpoint, { enabled: true });
    await waitFor(
      async () => held.received.length,
      (n) => n === 4,
      5_000,
    );
  });

  it('sends the rest to the URL the endpoint has now', async () => {
    const { held, endpoint } = await claimedAhead(4);
    const moved = await startReceiver();
    closers.push(moved.close);
    await webhooks.update(orgId, endpoint, { url: moved.url });
    await sleep(300);
    held.open();
    await waitFor(
      async () => moved.received.length,
      (n) => n === 3,
    );
    expect(held.arrived()).toBe(1);
  });
});
