/**
 * An event dispatched again (its id put back on event_queue: the app role may add an id
 * again, migration 0055) creates no second delivery (ON CONFLICT in dispatcher.ts), and
 * the subject heads stay right whatever the conflicts skipped: a new event queued behind
 * one of the batch that conflicted is its subject's head when nothing of the subject is
 * pending, and queued when something is. Two dispatchers at once: one dispatches, the
 * other finds the dispatch lock taken.
 */
import type { QueryResultRow } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchEvents } from '../../src/events/dispatcher.js';
import { WebhookService } from '../../src/events/webhook-service.js';
import { createTestDatabase, insertOrganization, type TestDatabase } from '../helpers/database.js';
import { TEST_SECRETS } from '../helpers/secrets.js';

describe('an event dispatched again', () => {
  let database: TestDatabase;
  let webhooks: WebhookService;
  let orgId: number;
  let endpoint: number;

  const q = <T extends object = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    database.db.pool.query<T & QueryResultRow>(sql, params).then((r) => r.rows);

  /** Adds events of these subjects, in order; their ids. */
  async function events(...subjects: string[]): Promise<number[]> {
    const rows = await q<{ id: string }>(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       SELECT $1, 'asset.created', now(), s, '{}' FROM unnest($2::text[]) WITH ORDINALITY AS u(s, n) ORDER BY n
       RETURNING id`,
      [orgId, subjects],
    );
    return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  }

  /** Puts the events back on the dispatcher's queue, as a crash after their dispatch could have. */
  const queueAgain = (ids: number[]) =>
    q('INSERT INTO event_queue (id) SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING', [ids]);

  /** Every delivery of the subject for the endpoint, in event order. */
  async function deliveries(subject: string) {
    return q<{ event_id: string; state: string; queued: boolean }>(
      `SELECT event_id, state, queued FROM webhook_deliveries WHERE endpoint_id = $1 AND subject = $2
       ORDER BY event_id, id`,
      [endpoint, subject],
    ).then((rows) => rows.map((r) => ({ event: Number(r.event_id), state: r.state, queued: r.queued })));
  }

  const delivered = (eventIds: number[]) =>
    q(
      `UPDATE webhook_deliveries SET state = 'delivered', attempts = 1, queued = false, delivered_at = now_ms()
       WHERE endpoint_id = $1 AND event_id = ANY($2::bigint[])`,
      [endpoint, eventIds],
    );

  beforeAll(async () => {
    database = await createTestDatabase();
    webhooks = new WebhookService(database.db, TEST_SECRETS, { allowPrivate: true });
    orgId = await insertOrganization(database.db, 'Dispatched again');
    endpoint = (
      await webhooks.create(orgId, { url: 'http://127.0.0.1:9/hook', event_types: ['asset.created'] })
    ).endpoint.id;
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('creates no second delivery, and leaves the heads as they were', async () => {
    const [a1, a2, b1] = (await events('asset:9001', 'asset:9001', 'asset:9002')) as [number, number, number];
    expect(await dispatchEvents(database.db)).toBe(3);
    await queueAgain([a1, a2, b1]);
    expect(await dispatchEvents(database.db)).toBe(3);

    expect(await deliveries('asset:9001')).toEqual([
      { event: a1, state: 'pending', queued: false },
      { event: a2, state: 'pending', queued: true },
    ]);
    expect(await deliveries('asset:9002')).toEqual([{ event: b1, state: 'pending', queued: false }]);
  });

  it('makes a new event its subject head when the one before it in the batch conflicted and is done', async () => {
    // c1 was delivered; dispatched again with a new c2 of the same subject, c2 comes second
    // in the batch (queued by the insert) though nothing of the subject is pending.
    const [c1] = (await events('asset:9003')) as [number];
    await dispatchEvents(database.db);
    await delivered([c1]);
    const [c2] = (await events('asset:9003')) as [number];
    await queueAgain([c1]);
    expect(await dispatchEvents(database.db)).toBe(2);

    expect(await deliveries('asset:9003')).toEqual([
      { event: c1, state: 'delivered', queued: false },
      { event: c2, state: 'pending', queued: false },
    ]);
  });

  it('queues a new event behind a pending one of its subject that conflicted', async () => {
    // d1 delivered, d2 pending (the head); d1 and d2 dispatched again with a new d3.
    const [d1, d2] = (await events('asset:9004', 'asset:9004')) as [number, number];
    await dispatchEvents(database.db);
    await delivered([d1]);
    await q(
      "UPDATE webhook_deliveries SET queued = false WHERE endpoint_id = $1 AND event_id = $2 AND state = 'pending'",
      [endpoint, d2],
    );
    const [d3] = (await events('asset:9004')) as [number];
    await queueAgain([d1, d2]);
    expect(await dispatchEvents(database.db)).toBe(3);

    expect(await deliveries('asset:9004')).toEqual([
      { event: d1, state: 'delivered', queued: false },
      { event: d2, state: 'pending', queued: false },
      { event: d3, state: 'pending', queued: true },
    ]);
  });

  it('two dispatchers at once: the events are dispatched once', async () => {
    const [e1, e2] = (await events('asset:9005', 'asset:9005')) as [number, number];
    const counts = await Promise.all([dispatchEvents(database.db), dispatchEvents(database.db)]);
    // One took the lock; the other found it taken (0), or came after and found nothing left.
    expect(counts.sort()).toEqual([0, 2]);
    expect(await deliveries('asset:9005')).toEqual([
      { event: e1, state: 'pending', queued: false },
      { event: e2, state: 'pending', queued: true },
    ]);
    const queued = await q<{ n: number }>('SELECT count(*)::int AS n FROM event_queue');
    expect(queued[0]!.n).toBe(0);
  });
});
