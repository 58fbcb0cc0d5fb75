/**
 * Which deliveries a worker claims (docs/events.md, "Isolation"): chosen per endpoint, so
 * that no endpoint's backlog, sendable or not, keeps another endpoint's deliveries from
 * the next poll. On the real schema, with thousands of pending deliveries of one endpoint
 * (more than the old global window of the oldest 2,048).
 */
import type { QueryResultRow } from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimDeliveries, markDelivered, markFailed } from '../../src/events/deliveries-repository.js';
import { DEFAULT_DELIVERY_POLICY } from '../../src/events/delivery-worker.js';
import { dispatchEvents } from '../../src/events/dispatcher.js';
import { WebhookService } from '../../src/events/webhook-service.js';
import { createTestDatabase, insertOrganization, type TestDatabase } from '../helpers/database.js';
import { TEST_SECRETS } from '../helpers/secrets.js';

const BACKLOG = 3_000;
/** As the worker claims: 8 send slots × 8 prefetched per endpoint, 512 held in all. */
const PER_ENDPOINT = DEFAULT_DELIVERY_POLICY.perEndpoint * DEFAULT_DELIVERY_POLICY.prefetch;

describe('choosing due deliveries', () => {
  let database: TestDatabase;
  let dead: number;
  let healthy: number;
  let elsewhere: number;
  let orgA: number;
  let orgB: number;

  const q = <T extends object = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    database.db.pool.query<T & QueryResultRow>(sql, params).then((r) => r.rows);

  const org = (name: string) => insertOrganization(database.db, name);

  async function endpoint(orgId: number, types = '{asset.created}'): Promise<number> {
    const [row] = await q<{ id: string }>(
      `INSERT INTO webhook_endpoints (org_id, url, event_types, secret)
       VALUES ($1, 'https://example.test/hook', $2, 'whsec_test') RETURNING id`,
      [orgId, types],
    );
    return Number(row!.id);
  }

  /**
   * `n` pending deliveries for the endpoint, one asset each, a millisecond apart, the newest
   * created (and due) `ageMs` ago: all due by now, even at 0 (spaced forward from now, the
   * later ones were due in the future, and a claim made within those milliseconds missed
   * them). Returns their ids, oldest first.
   */
  async function pending(
    endpointId: number,
    n: number,
    ageMs: number,
    subject = 'asset:',
  ): Promise<number[]> {
    const rows = await q<{ id: string }>(
      `WITH e AS (
         INSERT INTO events (org_id, type, occurred_at, subject, payload, created_at)
         SELECT w.org_id, 'asset.created', now(), $3 || nextval('seq'), '{}',
                now() - make_interval(secs => $4::float8 / 1000) - ($2 - g) * interval '1 ms'
         FROM webhook_endpoints w, generate_series(1, $2) g WHERE w.id = $1
         RETURNING id, org_id, subject, created_at)
       INSERT INTO webhook_deliveries (org_id, endpoint_id, event_id, subject, next_attempt_at, created_at)
       SELECT org_id, $1, id, subject, created_at, created_at FROM e ORDER BY id RETURNING id`,
      [endpointId, n, subject, ageMs],
    );
    await q('DELETE FROM event_queue');
    return rows.map((r) => Number(r.id));
  }

  const claim = (busy = new Map<number, number>(), limit = DEFAULT_DELIVERY_POLICY.maxInFlight) =>
    database.db.system((tx) =>
      claimDeliveries(tx, { limit, perEndpoint: PER_ENDPOINT, leaseMs: 60_000, busy }),
    );

  const endpointsOf = (claimed: Array<{ endpointId: number }>) => {
    const count = new Map<number, number>();
    for (const d of claimed) count.set(d.endpointId, (count.get(d.endpointId) ?? 0) + 1);
    return count;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    await q('CREATE SEQUENCE seq');
    orgA = await org('Dead receiver');
    orgB = await org('Healthy receivers');
  });
  afterAll(() => database?.drop());

  beforeEach(async () => {
    await q('DELETE FROM webhook_deliveries');
    await q('DELETE FROM event_queue');
    await q('DELETE FROM events');
    await q('DELETE FROM webhook_endpoints');
    dead = await endpoint(orgA);
    healthy = await endpoint(orgB);
    elsewhere = await endpoint(orgB, '{location.created}');
  });

  it("an endpoint whose slots are all taken holds back nobody else's delivery", async () => {
    await pending(dead, BACKLOG, 3600_000);
    // Its first deliveries are in flight here (a receiver that never answers): no free slot.
    const first = await claim();
    expect(endpointsOf(first)).toEqual(new Map([[dead, PER_ENDPOINT]]));
    const [mine] = await pending(healthy, 1, 0);
    const [theirs] = await pending(elsewhere, 1, 0);

    const next = await claim(new Map([[dead, PER_ENDPOINT]]));

    expect(next.map((d) => d.id).sort()).toEqual([mine, theirs].sort());
  });

  it("a disabled endpoint's backlog waits without holding back anyone, and is sent once enabled", async () => {
    await pending(dead, BACKLOG, 3600_000);
    await q('UPDATE webhook_endpoints SET disabled_at = now() WHERE id = $1', [dead]);
    const [mine] = await pending(healthy, 1, 0);

    expect((await claim()).map((d) => d.id)).toEqual([mine]);

    // Enabling it again sends what waited: oldest first, up to its slots.
    await q('UPDATE webhook_endpoints SET disabled_at = NULL WHERE id = $1', [dead]);
    const resumed = await claim();
    expect(endpointsOf(resumed)).toEqual(new Map([[dead, PER_ENDPOINT]]));
    expect(await q("SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'pending'")).toEqual([
      { n: BACKLOG + 1 },
    ]);
  });

  it("a removed endpoint's pending deliveries are never claimed and hold back nobody", async () => {
    await pending(dead, BACKLOG, 3600_000);
    await q('UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1', [dead]);
    const [mine] = await pending(healthy, 1, 0);
    const [theirs] = await pending(elsewhere, 1, 0);

    expect((await claim()).map((d) => d.id).sort()).toEqual([mine, theirs].sort());
    expect(await claim()).toEqual([]);
  });

  it('endpoints take turns when together they have more due than the worker may hold', async () => {
    await pending(dead, BACKLOG, 3600_000);
    const mine = await pending(healthy, 5, 0);
    const theirs = await pending(elsewhere, 5, 0);

    const claimed = await claim(new Map(), 9);

    // Three each: the oldest due of every endpoint first, not the 9 oldest of all.
    expect(endpointsOf(claimed)).toEqual(
      new Map([
        [dead, 3],
        [healthy, 3],
        [elsewhere, 3],
      ]),
    );
    expect(claimed.filter((d) => d.endpointId === healthy).map((d) => d.id)).toEqual(mine.slice(0, 3));
    expect(claimed.filter((d) => d.endpointId === elsewhere).map((d) => d.id)).toEqual(theirs.slice(0, 3));
  });

  it("claims only the head of a subject's queue, oldest due first", async () => {
    // One asset's three events and two others', all due.
    const [a1, a2, a3] = await pending(healthy, 3, 60_000, 'asset:one-');
    await q(`UPDATE webhook_deliveries SET subject = 'asset:one' WHERE id = ANY($1)`, [[a1, a2, a3]]);
    const [b, c] = await pending(healthy, 2, 30_000);

    const claimed = await claim();

    expect(claimed.map((d) => d.id)).toEqual([a1, b, c]);
  });

  it("a new delivery behind a subject's waiting head is not due before it", async () => {
    const [head] = await pending(dead, 1, 60_000, 'asset:7-');
    const retryAt = new Date(Date.now() + 3600_000);
    await q(
      `UPDATE webhook_deliveries SET subject = 'asset:7', attempts = 3, next_attempt_at = $2 WHERE id = $1`,
      [head, retryAt],
    );
    await q(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       VALUES ($1, 'asset.created', now(), 'asset:7', '{}'), ($1, 'asset.created', now(), 'asset:8', '{}')`,
      [orgA],
    );

    expect(await dispatchEvents(database.db)).toBe(2);

    const rows = await q<{ subject: string; next_attempt_at: Date }>(
      `SELECT subject, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = $1 AND id <> $2 ORDER BY subject`,
      [dead, head],
    );
    expect(rows.map((r) => r.subject)).toEqual(['asset:7', 'asset:8']);
    expect(rows[0]!.next_attempt_at.getTime()).toBe(retryAt.getTime());
    expect(rows[1]!.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now());
    // So nothing of asset 7 is due: only asset 8's delivery is claimed.
    expect((await claim()).map((d) => d.subject)).toEqual(['asset:8']);
  });

  it("queues a subject's later deliveries out of the claim's reach until the head's outcome is recorded", async () => {
    await q(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       SELECT $1, 'asset.created', now(), s, '{}'
       FROM unnest('{asset:1,asset:2,asset:1,asset:1,asset:2}'::text[]) WITH ORDINALITY AS u(s, n) ORDER BY n`,
      [orgB],
    );
    expect(await dispatchEvents(database.db)).toBe(5);
    const flags = () =>
      q<{ subject: string; state: string; queued: boolean }>(
        'SELECT subject, state, queued FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY event_id',
        [healthy],
      ).then((rows) => rows.map((r) => `${r.subject} ${r.state}${r.queued ? ' queued' : ''}`));
    // Only each subject's head is outside the queue, in one batch as across batches.
    expect(await flags()).toEqual([
      'asset:1 pending',
      'asset:2 pending',
      'asset:1 pending queued',
      'asset:1 pending queued',
      'asset:2 pending queued',
    ]);
    const heads = await claim();
    expect(heads.map((d) => d.subject)).toEqual(['asset:1', 'asset:2']);
    // While the heads are in flight, nothing is due.
    expect(await claim(new Map([[healthy, 2]]))).toEqual([]);

    // Delivered: asset 1's next is the head. Given up: asset 2's next.
    const a1 = heads.find((d) => d.subject === 'asset:1')!;
    const a2 = heads.find((d) => d.subject === 'asset:2')!;
    const outcome = { status: 204, error: null, durationMs: 5 };
    await database.db.system((tx) => markDelivered(tx, [{ delivery: a1, outcome }]));
    await database.db.system((tx) => markFailed(tx, a2, { ...outcome, status: 500 }, null, 86_400_000));
    expect(await flags()).toEqual([
      'asset:1 delivered',
      'asset:2 failed',
      'asset:1 pending',
      'asset:1 pending queued',
      'asset:2 pending',
    ]);

    // A new event of asset 1 queues behind its pending head, one of a new asset does not.
    await q(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       VALUES ($1, 'asset.created', now(), 'asset:1', '{}'), ($1, 'asset.created', now(), 'asset:3', '{}')`,
      [orgB],
    );
    expect(await dispatchEvents(database.db)).toBe(2);
    expect((await flags()).slice(5)).toEqual(['asset:1 pending queued', 'asset:3 pending']);
    expect((await claim()).map((d) => d.subject)).toEqual(['asset:1', 'asset:2', 'asset:3']);
  });

  it("an event sent again is its subject's head, ahead of the later ones, which wait behind it", async () => {
    await q(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       SELECT $1, 'asset.created', now(), 'asset:1', '{}' FROM generate_series(1, 3)`,
      [orgB],
    );
    expect(await dispatchEvents(database.db)).toBe(3);
    const [first] = await claim();
    const outcome = { status: 204, error: null, durationMs: 5 };
    await database.db.system((tx) => markDelivered(tx, [{ delivery: first!, outcome }]));

    const webhooks = new WebhookService(database.db, TEST_SECRETS, { allowPrivate: true });
    await webhooks.redeliver(orgB, healthy, first!.id);

    const queued = await q<{ id: string; queued: boolean }>(
      'SELECT id, queued FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY event_id',
      [healthy],
    );
    expect(queued.map((r) => r.queued)).toEqual([false, true, true]);
    const [again] = await claim();
    expect(again!.id).toBe(first!.id);
    await database.db.system((tx) => markDelivered(tx, [{ delivery: again!, outcome }]));
    expect((await claim()).map((d) => d.id)).toEqual([Number(queued[1]!.id)]);
  });
});
