/**
 * Removing a webhook endpoint (WebhookService.remove) racing a worker recording outcomes
 * of its deliveries (recordOutcomes), on two connections, ordered by what the server
 * reports (a third connection holds a row lock and the others are seen waiting behind it).
 * Both lock the deliveries in id order (docs/events.md, "Lock order"), whatever order the
 * removal's scan of the table would give: neither deadlocks.
 */
import { describe, expect, it } from 'vitest';
import { dispatchEvents } from '../../src/events/dispatcher.js';
import { OK, webhookRaces } from '../helpers/webhook-races.js';

describe('Removing an endpoint racing a recording of its deliveries', () => {
  const races = webhookRaces('Endpoint removal races');
  const { q, claimed, record, hold, release, untilWaiting } = races;

  it('the removal waits for the lowest delivery without holding a higher one the recording needs', async () => {
    const endpoint = async () =>
      (
        await races.webhooks.create(races.orgId, {
          url: 'http://127.0.0.1:9/hook',
          event_types: ['asset.created'],
        })
      ).endpoint.id;
    const removed = await endpoint();
    const other = await endpoint();
    // Two events, each delivered to both endpoints: the removed endpoint's deliveries j and
    // k, the other's m between them (j < m < k).
    const ids: number[] = [];
    for (const subject of ['asset:9', 'asset:10']) {
      await q(
        `INSERT INTO events (org_id, type, occurred_at, subject, payload) VALUES ($1, 'asset.created', now(), $2, '{}')`,
        [races.orgId, subject],
      );
      await dispatchEvents(races.database.db);
      const [mine] = await q<{ id: string }>(
        'SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND subject = $2',
        [removed, subject],
      );
      ids.push(Number(mine!.id));
    }
    const [j, k] = ids as [number, number];
    const [m$] = await q<{ id: string }>(
      "SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND subject = 'asset:9'",
      [other],
    );
    const m = Number(m$!.id);
    expect(j < m && m < k).toBe(true);
    // In flight, k first: j's row version is written last and due last, and its subject
    // sorts last, so any scan of the removed endpoint's pending deliveries but one in id
    // order comes to k before j.
    const inFlight = (id: number, minutes: number) =>
      q(
        `UPDATE webhook_deliveries SET queued = false, leased_until = now() + interval '1 minute',
           next_attempt_at = now() + make_interval(mins => $2) WHERE id = $1`,
        [id, minutes],
      );
    await inFlight(k, 1);
    await inFlight(m, 1);
    await inFlight(j, 2);
    const batch = await Promise.all(
      [j, m, k].map(async (id) => ({ delivery: await claimed(id), outcome: OK })),
    );
    const retriesBefore = races.retries();

    await hold(m);
    // The recording locks j and waits for m.
    const recorded = record(batch);
    await untilWaiting(1, 'the recording waiting for the held delivery');
    // The removal waits for j. Had it locked k first (its scan's order), the recording,
    // given m, would wait for k: a deadlock, one of them aborted and run again.
    const removal = races.webhooks.remove(races.orgId, removed);
    await untilWaiting(2, 'the removal waiting for the recording');
    await release();
    await Promise.all([recorded, removal]);

    expect(races.retries() - retriesBefore).toBe(0);
    const states = await q<{ id: string; state: string }>(
      'SELECT id, state FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id',
      [[j, m, k]],
    );
    expect(states.map((r) => [Number(r.id), r.state])).toEqual([
      [j, 'delivered'],
      [m, 'delivered'],
      [k, 'delivered'],
    ]);
    const [gone] = await q<{ removed: boolean }>(
      'SELECT deleted_at IS NOT NULL AS removed FROM webhook_endpoints WHERE id = $1',
      [removed],
    );
    expect(gone!.removed).toBe(true);
  });

  it('removing an endpoint deletes its pending deliveries and keeps the delivered ones', async () => {
    const { endpoint } = await races.webhooks.create(races.orgId, {
      url: 'http://127.0.0.1:9/hook',
      event_types: ['asset.created'],
    });
    await q(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       SELECT $1, 'asset.created', now(), 'asset:' || n, '{}' FROM generate_series(1, 5) AS n`,
      [races.orgId],
    );
    await dispatchEvents(races.database.db);
    const mine = await q<{ id: string }>(
      'SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id',
      [endpoint.id],
    );
    expect(mine).toHaveLength(5);
    await q("UPDATE webhook_deliveries SET state = 'delivered', delivered_at = now_ms() WHERE id = $1", [
      mine[2]!.id,
    ]);

    await races.webhooks.remove(races.orgId, endpoint.id);

    const left = await q<{ id: string; state: string }>(
      'SELECT id, state FROM webhook_deliveries WHERE endpoint_id = $1',
      [endpoint.id],
    );
    expect(left.map((r) => [Number(r.id), r.state])).toEqual([[Number(mine[2]!.id), 'delivered']]);
  });
});
