/**
 * Removing a webhook endpoint (docs/events.md, "Removing"): its pending deliveries end with
 * it, in its transaction; nothing of it is sent afterwards, and the organization's other
 * endpoints and other organizations' endpoints keep theirs.
 */
import type { QueryResultRow } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DELIVERY_POLICY, DeliveryWorker } from '../../src/events/delivery-worker.js';
import { dispatchEvents } from '../../src/events/dispatcher.js';
import { WebhookService } from '../../src/events/webhook-service.js';
import { createTestDatabase, insertOrganization, type TestDatabase } from '../helpers/database.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import { waitFor } from '../ingest/helpers.js';
import { startReceiver } from './receiver.js';

describe('removing an endpoint', () => {
  let database: TestDatabase;
  let webhooks: WebhookService;
  const closers: Array<() => Promise<void>> = [];

  const q = <T extends object = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    database.db.pool.query<T & QueryResultRow>(sql, params).then((r) => r.rows);

  const org = (name: string) => insertOrganization(database.db, name);

  async function receiver() {
    const r = await startReceiver();
    closers.push(r.close);
    return r;
  }

  async function events(orgId: number, n: number): Promise<void> {
    await q(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       SELECT $1, 'asset.created', now(), 'asset:' || g, '{}' FROM generate_series(1, $2) g`,
      [orgId, n],
    );
  }

  const pendingOf = async (endpointId: number) =>
    (
      await q<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending'",
        [endpointId],
      )
    )[0]!.n;

  beforeAll(async () => {
    database = await createTestDatabase();
    webhooks = new WebhookService(database.db, TEST_SECRETS, { allowPrivate: true });
  });
  afterAll(async () => {
    for (const close of closers) await close();
    await database?.drop();
  });

  it('ends its pending deliveries at once; none is sent, and the other endpoints keep theirs', async () => {
    const orgA = await org('Removes one');
    const orgB = await org('Bystander');
    const [gone, kept, other] = [await receiver(), await receiver(), await receiver()];
    const types = ['asset.created' as const];
    const removed = (await webhooks.create(orgA, { url: gone.url, event_types: types })).endpoint.id;
    const sibling = (await webhooks.create(orgA, { url: kept.url, event_types: types })).endpoint.id;
    const foreign = (await webhooks.create(orgB, { url: other.url, event_types: types })).endpoint.id;
    await events(orgA, 5);
    await events(orgB, 3);
    expect(await dispatchEvents(database.db)).toBe(8);
    // One of its deliveries was sent before: the log of what happened is not rewritten.
    await q(
      `UPDATE webhook_deliveries SET state = 'delivered', delivered_at = now(), attempts = 1
       WHERE id = (SELECT min(id) FROM webhook_deliveries WHERE endpoint_id = $1)`,
      [removed],
    );
    expect([await pendingOf(removed), await pendingOf(sibling), await pendingOf(foreign)]).toEqual([4, 5, 3]);

    // Another organization cannot remove (or touch the deliveries of) orgB's endpoint.
    await expect(webhooks.remove(orgA, foreign)).rejects.toMatchObject({ type: 'not_found' });
    await webhooks.remove(orgA, removed);

    expect([await pendingOf(removed), await pendingOf(sibling), await pendingOf(foreign)]).toEqual([0, 5, 3]);
    expect(await q('SELECT state FROM webhook_deliveries WHERE endpoint_id = $1', [removed])).toEqual([
      { state: 'delivered' },
    ]);

    const worker = new DeliveryWorker(database.db, TEST_SECRETS, {
      ...DEFAULT_DELIVERY_POLICY,
      allowPrivate: true,
      pollMs: 25,
    });
    worker.start();
    try {
      await waitFor(
        async () => [kept.received.length, other.received.length],
        ([a, b]) => a === 5 && b === 3,
      );
      await waitFor(
        async () => (await pendingOf(sibling)) + (await pendingOf(foreign)),
        (n) => n === 0,
      );
    } finally {
      await worker.stop();
    }
    expect(gone.received).toEqual([]);
  });
});
