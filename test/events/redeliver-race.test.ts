/**
 * Send again (WebhookService.redeliver) racing a worker recording outcomes of the same
 * subject (recordOutcomes), on two connections, ordered by what the server reports
 * (a third connection holds a row lock and the others are seen waiting behind it). Both
 * lock the deliveries in id order (docs/events.md, "Lock order"): neither deadlocks, and
 * the subject has one head afterwards. And two recordings locking the same endpoints.
 */
import { describe, expect, it } from 'vitest';
import { dispatchEvents } from '../../src/events/dispatcher.js';
import { OK, TIMED_OUT, webhookRaces } from '../helpers/webhook-races.js';

describe('Send again racing a recording of the same subject', () => {
  const races = webhookRaces('Send again races');
  const { q, claimed, record, hold, release, untilWaiting } = races;
  let subjects = 0;

  /**
   * A new endpoint with `n` events of a new subject dispatched to it (the earlier tests'
   * endpoints get them too, and this one none of theirs); their deliveries' ids in order.
   */
  async function subjectOf(n: number): Promise<{ endpoint: number; subject: string; ids: number[] }> {
    const { endpoint } = await races.webhooks.create(races.orgId, {
      url: 'http://127.0.0.1:9/hook',
      event_types: ['asset.created'],
    });
    const subject = `asset:${++subjects}`;
    await q(
      `INSERT INTO events (org_id, type, occurred_at, subject, payload)
       SELECT $1, 'asset.created', now(), $2, '{}' FROM generate_series(1, $3)`,
      [races.orgId, subject, n],
    );
    await dispatchEvents(races.database.db);
    const rows = await q<{ id: string }>(
      'SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND subject = $2 ORDER BY event_id',
      [endpoint.id, subject],
    );
    return { endpoint: endpoint.id, subject, ids: rows.map((r) => Number(r.id)) };
  }

  const delivered = (id: number) =>
    q(
      `UPDATE webhook_deliveries SET state = 'delivered', attempts = 1, queued = false, leased_until = NULL,
         last_attempt_at = now_ms(), delivered_at = now_ms(), last_status = 204 WHERE id = $1`,
      [id],
    );
  const inFlight = (id: number) =>
    q(
      "UPDATE webhook_deliveries SET queued = false, leased_until = now() + interval '1 minute' WHERE id = $1",
      [id],
    );

  /** The pending deliveries of the subject for its endpoint, in event order. */
  async function pendingFlags(s: {
    endpoint: number;
    subject: string;
  }): Promise<Array<{ id: number; queued: boolean }>> {
    const rows = await q<{ id: string; queued: boolean }>(
      `SELECT id, queued FROM webhook_deliveries WHERE endpoint_id = $1 AND subject = $2 AND state = 'pending'
       ORDER BY event_id`,
      [s.endpoint, s.subject],
    );
    return rows.map((r) => ({ id: Number(r.id), queued: r.queued }));
  }

  it('Send again of a delivered event and a recording that holds the head and records that event too: no deadlock', async () => {
    // 1 was delivered; 2, its subject's head, is in flight. The worker that sent 1 first
    // held it past its lease (another worker sent and recorded it meanwhile) and records
    // its late timeout together with 2's success.
    const a = await subjectOf(2);
    const { endpoint, ids } = a;
    const [first, second] = ids as [number, number];
    await delivered(first);
    await inFlight(second);
    const batch = [
      { delivery: await claimed(second), outcome: OK },
      { delivery: await claimed(first), outcome: TIMED_OUT },
    ];
    const retriesBefore = races.retries();

    await hold(first);
    const sentAgain = races.webhooks.redeliver(races.orgId, endpoint, first);
    await untilWaiting(1, 'Send again waiting for the held delivery');
    const recorded = record(batch);
    await untilWaiting(2, 'the recording waiting for the held delivery');
    // Send again has the delivery first; locking the subject's head next, it would wait
    // for the recording, which (had it locked the head before the delivery) waits for it.
    await release();
    const [again] = await Promise.all([sentAgain, recorded]);

    expect(again.state).toBe('pending');
    expect(races.retries() - retriesBefore).toBe(0);
    const [second$] = await q<{ state: string }>('SELECT state FROM webhook_deliveries WHERE id = $1', [
      second,
    ]);
    expect(second$!.state).toBe('delivered');
    // 1, sent again, is its subject's only head; the late timeout, of a lease 1 no longer
    // holds, was not recorded (it would have put 1's retry a minute or more away).
    expect(await pendingFlags(a)).toEqual([{ id: first, queued: false }]);
    const [first$] = await q<{ next: boolean }>(
      'SELECT next_attempt_at <= now() AS next FROM webhook_deliveries WHERE id = $1',
      [first],
    );
    expect(first$!.next).toBe(true);
  });

  it('Send again of an earlier event while the head is recorded delivered: the next one is queued behind it', async () => {
    // 1 delivered, 2 (the head) in flight, 3 queued behind it. The recording of 2 makes 3
    // the head; Send again of 1 makes 1 the head: 3 must end up queued behind 1.
    const a = await subjectOf(3);
    const { endpoint, ids } = a;
    const [first, second, third] = ids as [number, number, number];
    await delivered(first);
    await inFlight(second);
    const batch = [{ delivery: await claimed(second), outcome: OK }];
    const retriesBefore = races.retries();

    await hold(third);
    // The recording has marked 2 delivered and waits to make 3 the head.
    const recorded = record(batch);
    await untilWaiting(1, 'the recording waiting for the held delivery');
    // Send again waits for 2, which the recording holds.
    const sentAgain = races.webhooks.redeliver(races.orgId, endpoint, first);
    await untilWaiting(2, 'Send again waiting for the recording');
    await release();
    await Promise.all([sentAgain, recorded]);

    expect(races.retries() - retriesBefore).toBe(0);
    expect(await pendingFlags(a)).toEqual([
      { id: first, queued: false },
      { id: third, queued: true },
    ]);
  });

  it('a recording of several subjects, one a failure to retry, racing Send again of that subject completes', async () => {
    // Subject A: 1 delivered, 2 the head in flight (its send timed out), 3 queued. Subject
    // B: its head in flight, delivered. The recording holds 2 and waits for 3 (holding back
    // the rows behind 2 until its retry); Send again of 1 waits for 2.
    const a = await subjectOf(3);
    const b = await subjectOf(1);
    const [first, second, third] = a.ids as [number, number, number];
    await delivered(first);
    await inFlight(second);
    await inFlight(b.ids[0]!);
    const batch = [
      { delivery: await claimed(b.ids[0]!), outcome: OK },
      { delivery: await claimed(second), outcome: TIMED_OUT },
    ];
    const retriesBefore = races.retries();

    await hold(third);
    const recorded = record(batch);
    await untilWaiting(1, 'the recording waiting for the held delivery');
    const sentAgain = races.webhooks.redeliver(races.orgId, a.endpoint, first);
    await untilWaiting(2, 'Send again waiting for the recording');
    await release();
    await Promise.all([sentAgain, recorded]);

    expect(races.retries() - retriesBefore).toBe(0);
    expect(await pendingFlags(a)).toEqual([
      { id: first, queued: false },
      { id: second, queued: true },
      { id: third, queued: true },
    ]);
    expect(await pendingFlags(b)).toEqual([]);
  });

  it('two recordings of failures and successes for the same endpoints in other orders: no deadlock', async () => {
    // Endpoint 1: a1 (its send timed out) with a1q behind it, and b1 (sent). Endpoint 2: a2
    // (sent) and b2 (timed out). One recording has a2 and a1, the other b1 and b2. Had they
    // locked the endpoints as their statements came (the successes' endpoints clearing
    // failing_since, then each failure's), the first would hold endpoint 2 and wait for
    // endpoint 1 that the second holds while it waits for endpoint 2.
    const s1 = await subjectOf(2);
    const s2 = await subjectOf(1);
    const s3 = await subjectOf(1);
    const [a1, a1q] = s1.ids as [number, number];
    const a2 = s2.ids[0]!;
    const deliveryOf = async (endpoint: number, subject: string) =>
      Number(
        (
          await q<{ id: string }>(
            'SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND subject = $2',
            [endpoint, subject],
          )
        )[0]!.id,
      );
    const b1 = await deliveryOf(s1.endpoint, s2.subject);
    const b2 = await deliveryOf(s2.endpoint, s3.subject);
    for (const id of [a1, a2, b1, b2]) await inFlight(id);
    await q(
      "UPDATE webhook_endpoints SET failing_since = now() - interval '1 minute' WHERE id = ANY($1::bigint[])",
      [[s1.endpoint, s2.endpoint]],
    );
    const first = [
      { delivery: await claimed(a2), outcome: OK },
      { delivery: await claimed(a1), outcome: TIMED_OUT },
    ];
    const second = [
      { delivery: await claimed(b1), outcome: OK },
      { delivery: await claimed(b2), outcome: TIMED_OUT },
    ];
    const retriesBefore = races.retries();

    await hold(a1q);
    // The first waits to hold a1q back until a1's retry.
    const recordedFirst = record(first);
    await untilWaiting(1, 'the first recording waiting for the held delivery');
    const recordedSecond = record(second);
    await untilWaiting(2, 'the second recording waiting for an endpoint');
    await release();
    await Promise.all([recordedFirst, recordedSecond]);

    expect(races.retries() - retriesBefore).toBe(0);
    const states = await q<{ id: string; state: string; attempts: number }>(
      'SELECT id, state, attempts FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id',
      [[a1, a2, b1, b2]],
    );
    expect(Object.fromEntries(states.map((r) => [Number(r.id), r.state]))).toEqual({
      [a1]: 'pending',
      [a2]: 'delivered',
      [b1]: 'delivered',
      [b2]: 'pending',
    });
  });

  it('an outcome whose lease ran out and was taken since is not recorded; one still holding it is', async () => {
    // 1 was sent and recorded by another worker after this one's lease ran out; 2 was
    // claimed again by another worker (a new lease); 3 still holds this worker's lease.
    const a = await subjectOf(1);
    const b = await subjectOf(1);
    const c = await subjectOf(1);
    const [one, two, three] = [a.ids[0]!, b.ids[0]!, c.ids[0]!];
    for (const id of [one, two, three]) await inFlight(id);
    const late = [
      { delivery: await claimed(one), outcome: TIMED_OUT },
      { delivery: await claimed(two), outcome: TIMED_OUT },
      { delivery: await claimed(three), outcome: OK },
    ];
    await delivered(one);
    await q("UPDATE webhook_deliveries SET leased_until = now() + interval '2 minutes' WHERE id = $1", [two]);

    const { stale } = await record(late);

    expect(stale).toBe(2);
    const rows = await q<{ id: string; state: string; attempts: number; last_error: string | null }>(
      'SELECT id, state, attempts, last_error FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id',
      [[one, two, three]],
    );
    expect(rows.map((r) => [Number(r.id), r.state, r.attempts, r.last_error])).toEqual([
      [one, 'delivered', 1, null],
      [two, 'pending', 0, null],
      [three, 'delivered', 1, null],
    ]);
  });
});
