import type { QueryResultRow } from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EventsRetention, sweepEvents } from '../../src/events/retention.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const DAY_MS = 24 * 3600_000;
const NOW = Date.parse('2026-06-01T12:00:00Z');
const daysAgo = (days: number) => new Date(NOW - days * DAY_MS);

/**
 * Events retention (docs/events.md "Retention") on the real schema: finished deliveries
 * and dispatched events older than the retention go; an event with a pending delivery,
 * or not yet dispatched, stays however old.
 */
describe('events retention', () => {
  let database: TestDatabase;
  let orgId: number;
  let live: number;
  let disabled: number;
  let removed: number;

  const q = <T extends object = Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    database.db.pool.query<T & QueryResultRow>(sql, params).then((r) => r.rows);

  async function event(created: Date, dispatched: boolean): Promise<number> {
    const [row] = await q<{ id: string }>(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload, created_at)
       VALUES ($1, 'asset.moved', $2, 'asset:' || nextval('seq'), '{}', $2) RETURNING id`,
      [orgId, created],
    );
    // Dispatched is off the queue the insert put it on (migration 0055).
    if (dispatched) await q('DELETE FROM event_queue WHERE id = $1', [row!.id]);
    return Number(row!.id);
  }

  async function delivery(
    endpoint: number,
    eventId: number,
    state: 'pending' | 'delivered' | 'failed',
    created: Date,
    lastAttempt: Date | null = created,
  ): Promise<number> {
    const [row] = await q<{ id: string }>(
      `INSERT INTO webhook_deliveries (org_id, endpoint_id, event_id, subject, state, created_at, last_attempt_at)
       VALUES ($1, $2, $3, 'asset:x', $4, $5, $6) RETURNING id`,
      [orgId, endpoint, eventId, state, created, lastAttempt],
    );
    return Number(row!.id);
  }

  const eventsLeft = async (ids: number[]) =>
    (await q<{ id: string }>('SELECT id FROM events WHERE id = ANY($1) ORDER BY id', [ids])).map((r) =>
      Number(r.id),
    );
  const deliveriesLeft = async (ids: number[]) =>
    (await q<{ id: string }>('SELECT id FROM webhook_deliveries WHERE id = ANY($1) ORDER BY id', [ids])).map(
      (r) => Number(r.id),
    );

  async function endpoint(extra = ''): Promise<number> {
    const [row] = await q<{ id: number }>(
      `INSERT INTO webhook_endpoints (org_id, url, event_types, secret) VALUES ($1, 'https://example.test/hook',
       '{asset.moved}', 'whsec_test') RETURNING id`,
      [orgId],
    );
    if (extra) await q(`UPDATE webhook_endpoints SET ${extra} WHERE id = $1`, [row!.id]);
    return row!.id;
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    await q('CREATE SEQUENCE seq');
    [{ id: orgId }] = (await q<{ id: number }>(
      "INSERT INTO organizations (name) VALUES ('Depot') RETURNING id",
    )) as [{ id: number }];
    live = await endpoint();
    disabled = await endpoint(`disabled_at = now()`);
    removed = await endpoint(`deleted_at = now()`);
  });
  afterAll(() => database?.drop());

  beforeEach(async () => {
    await q('DELETE FROM webhook_deliveries');
    await q('DELETE FROM events');
  });

  it('deletes finished deliveries and dispatched events older than the retention, and nothing newer', async () => {
    const oldBare = await event(daysAgo(40), true);
    const recentBare = await event(daysAgo(10), true);
    const oldDelivered = await event(daysAgo(40), true);
    const d1 = await delivery(live, oldDelivered, 'delivered', daysAgo(40));
    const oldFailed = await event(daysAgo(40), true);
    const d2 = await delivery(live, oldFailed, 'failed', daysAgo(40), daysAgo(39));
    const recentDelivered = await event(daysAgo(5), true);
    const d3 = await delivery(live, recentDelivered, 'delivered', daysAgo(5));

    const result = await sweepEvents(database.db, 30, NOW);

    expect(result).toEqual({ deliveries: 2, events: 3 });
    expect(await eventsLeft([oldBare, recentBare, oldDelivered, oldFailed, recentDelivered])).toEqual([
      recentBare,
      recentDelivered,
    ]);
    expect(await deliveriesLeft([d1, d2, d3])).toEqual([d3]);
  });

  it('never deletes an event whose delivery is pending, nor one not yet dispatched', async () => {
    const pending = await event(daysAgo(60), true);
    const d1 = await delivery(live, pending, 'pending', daysAgo(60), null);
    // Waiting for its endpoint to be enabled again: still pending, kept.
    const waiting = await event(daysAgo(60), true);
    const d2 = await delivery(disabled, waiting, 'pending', daysAgo(60), null);
    // One endpoint delivered, the other is still retrying: the event stays, the finished delivery goes.
    const half = await event(daysAgo(60), true);
    const d3 = await delivery(live, half, 'delivered', daysAgo(60));
    const d4 = await delivery(disabled, half, 'pending', daysAgo(60), daysAgo(59));
    const undispatched = await event(daysAgo(60), false);

    const result = await sweepEvents(database.db, 30, NOW);

    expect(result).toEqual({ deliveries: 1, events: 0 });
    expect(await eventsLeft([pending, waiting, half, undispatched])).toEqual([
      pending,
      waiting,
      half,
      undispatched,
    ]);
    expect(await deliveriesLeft([d1, d2, d3, d4])).toEqual([d1, d2, d4]);
  });

  it('counts a delivery sent again from its last attempt', async () => {
    const again = await event(daysAgo(40), true);
    const d1 = await delivery(live, again, 'delivered', daysAgo(40), daysAgo(2));
    expect(await sweepEvents(database.db, 30, NOW)).toEqual({ deliveries: 0, events: 0 });
    expect(await deliveriesLeft([d1])).toEqual([d1]);
    expect(await eventsLeft([again])).toEqual([again]);
  });

  it("deletes a removed endpoint's old pending deliveries (never sent), then their events", async () => {
    const orphan = await event(daysAgo(40), true);
    const d1 = await delivery(removed, orphan, 'pending', daysAgo(40), null);
    const fresh = await event(daysAgo(3), true);
    const d2 = await delivery(removed, fresh, 'pending', daysAgo(3), null);

    expect(await sweepEvents(database.db, 30, NOW)).toEqual({ deliveries: 1, events: 1 });
    expect(await deliveriesLeft([d1, d2])).toEqual([d2]);
    expect(await eventsLeft([orphan, fresh])).toEqual([fresh]);
  });

  it('works through a backlog in batches, past old events that stay', async () => {
    // Batches of 4: kept events at the head of the table, then 17 expired ones, then new ones.
    const keptAtHead: number[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await event(daysAgo(90), true);
      await delivery(live, id, 'pending', daysAgo(90), null);
      keptAtHead.push(id);
    }
    const expired: number[] = [];
    for (let i = 0; i < 17; i++) expired.push(await event(daysAgo(50 - i), true));
    const recent: number[] = [];
    for (let i = 0; i < 6; i++) recent.push(await event(daysAgo(1), true));
    const finished: number[] = [];
    for (const id of expired.slice(0, 9)) finished.push(await delivery(live, id, 'delivered', daysAgo(45)));

    const result = await sweepEvents(database.db, 30, NOW, 4);

    expect(result).toEqual({ deliveries: 9, events: 17 });
    expect(await eventsLeft([...keptAtHead, ...expired, ...recent])).toEqual([...keptAtHead, ...recent]);
    expect(await deliveriesLeft(finished)).toEqual([]);
    // A second pass finds nothing more.
    expect(await sweepEvents(database.db, 30, NOW, 4)).toEqual({ deliveries: 0, events: 0 });
  });

  it('as the hourly job: logs what it removed, and a failure instead of throwing', async () => {
    await event(daysAgo(40), true);
    const lines: Array<{ level: string; details: object; message: string }> = [];
    const logger = {
      info: (details: object, message: string) => lines.push({ level: 'info', details, message }),
      warn: (details: object, message: string) => lines.push({ level: 'warn', details, message }),
    };
    await new EventsRetention(database.db, 30, logger).runOnce(NOW);
    expect(lines).toEqual([
      {
        level: 'info',
        details: { deliveries: 0, events: 1, retentionDays: 30 },
        message: 'expired events and webhook deliveries removed',
      },
    ]);

    const broken = { ...database.db, system: () => Promise.reject(new Error('database is down')) };
    await new EventsRetention(broken, 30, logger).runOnce(NOW);
    expect(lines[1]).toMatchObject({ level: 'warn', message: expect.stringMatching(/failed/) });
  });
});
