import type { Tx } from '../db/pool.js';
import type { EventType } from './outbox.js';

/** A delivery a worker has leased, with what it needs to send it. */
export interface ClaimedDelivery {
  id: number;
  endpointId: number;
  eventId: number;
  subject: string;
  attempts: number;
  createdAt: Date;
  /**
   * The lease as claimed (leased_until, PostgreSQL's text of it, exact to the microsecond):
   * an outcome is recorded only while the delivery still holds this lease (lockDeliveries).
   */
  lease: string | null;
  url: string;
  secret: string;
  event: { id: number; org_id: number; type: EventType; occurred_at: Date; payload: object };
}

/**
 * Leases due deliveries, chosen per endpoint so that no endpoint's backlog stands in front
 * of another's (docs/events.md, "Isolation"). Only enabled endpoints that are not removed,
 * with a free slot here (`busy` holds each endpoint's deliveries claimed and not yet
 * recorded), are looked at: a disabled or removed endpoint's pending deliveries, and those
 * of an endpoint whose slots are all taken, are not even read. Each such endpoint gives at
 * most its free slots of its oldest due deliveries, only the head of each (endpoint,
 * subject) queue (so one subject's events reach a receiver in order), read off the
 * endpoint's part of webhook_deliveries_due_heads (migration 0062), which holds only those
 * heads: the deliveries queued behind them are not read. When together
 * they are more than `limit`, endpoints take turns: every endpoint's first before any
 * endpoint's second, and so on. The lease lets a crashed worker's deliveries be retried by
 * anyone once it runs out.
 */
export async function claimDeliveries(
  tx: Tx,
  options: { limit: number; perEndpoint: number; leaseMs: number; busy: Map<number, number> },
): Promise<ClaimedDelivery[]> {
  const { rows } = await tx.query(
    `WITH open AS (
       SELECT w.id, least($1, $2 - coalesce(b.n, 0)) AS free
       FROM webhook_endpoints w
       LEFT JOIN unnest($3::bigint[], $4::int[]) AS b(endpoint_id, n) ON b.endpoint_id = w.id
       WHERE w.deleted_at IS NULL AND w.disabled_at IS NULL AND coalesce(b.n, 0) < $2
     ),
     due AS (
       SELECT d.id, d.next_attempt_at,
              row_number() OVER (PARTITION BY open.id ORDER BY d.next_attempt_at, d.id) AS turn
       FROM open CROSS JOIN LATERAL (
         SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
         WHERE d.endpoint_id = open.id AND d.state = 'pending' AND NOT d.queued AND d.next_attempt_at <= now()
           AND (d.leased_until IS NULL OR d.leased_until < now())
           AND NOT EXISTS (
             SELECT 1 FROM webhook_deliveries p
             WHERE p.endpoint_id = d.endpoint_id AND p.subject = d.subject AND p.state = 'pending'
               AND p.event_id < d.event_id)
         ORDER BY d.next_attempt_at, d.id
         LIMIT open.free
       ) d
     ),
     chosen AS (SELECT id FROM due ORDER BY turn, next_attempt_at, id LIMIT $1)
     UPDATE webhook_deliveries d SET leased_until = now() + make_interval(secs => $5::float8 / 1000)
     FROM chosen, webhook_endpoints w, events e
     WHERE d.id = chosen.id AND w.id = d.endpoint_id AND e.id = d.event_id
       AND d.state = 'pending' AND (d.leased_until IS NULL OR d.leased_until < now())
     RETURNING d.id, d.endpoint_id, d.event_id, d.subject, d.attempts, d.created_at,
               d.leased_until::text AS lease, w.url, w.secret,
               e.org_id, e.type, e.occurred_at, e.payload`,
    [
      options.limit,
      options.perEndpoint,
      [...options.busy.keys()],
      [...options.busy.values()],
      options.leaseMs,
    ],
  );
  return rows
    .map((r) => ({
      id: r.id,
      endpointId: r.endpoint_id,
      eventId: r.event_id,
      subject: r.subject,
      attempts: r.attempts,
      createdAt: r.created_at,
      lease: r.lease,
      url: r.url,
      secret: r.secret,
      event: {
        id: r.event_id,
        org_id: r.org_id,
        type: r.type,
        occurred_at: r.occurred_at,
        payload: r.payload,
      },
    }))
    .sort((a, b) => a.eventId - b.eventId);
}

/** An endpoint as a worker holding deliveries for it must now see it. */
export interface EndpointNow {
  id: number;
  /** Removed or disabled since the claim: its deliveries held here are not to be sent. */
  closed: boolean;
  url: string;
  secret: string;
}

/**
 * The endpoints' current address, secret and state, for deliveries claimed ahead of their
 * send: an endpoint removed, disabled, or moved to another URL after
 * the claim must not be sent the rest of what was claimed as it was.
 */
export async function endpointsNow(tx: Tx, ids: number[]): Promise<EndpointNow[]> {
  const { rows } = await tx.query<EndpointNow>(
    `SELECT id, (deleted_at IS NOT NULL OR disabled_at IS NOT NULL) AS closed, url, secret
     FROM webhook_endpoints WHERE id = ANY($1::bigint[])`,
    [ids],
  );
  return rows;
}

/**
 * Ends the leases of deliveries a worker will not send after all (their endpoint was
 * disabled meanwhile), so that enabling it again sends them at once, in order, instead of
 * after the lease. A removed endpoint's pending deliveries are gone already.
 */
export async function releaseDeliveries(tx: Tx, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    `UPDATE webhook_deliveries SET leased_until = NULL WHERE id = ANY($1::bigint[]) AND state = 'pending'`,
    [ids],
  );
}

/**
 * Ends every pending delivery's lease, of every organization: for a start where no worker
 * that could hold one is left (DeliveryWorker.releaseOrphanedLeases). The number released.
 */
export async function releaseAllLeases(tx: Tx): Promise<number> {
  const { rowCount } = await tx.query(
    `UPDATE webhook_deliveries SET leased_until = NULL WHERE state = 'pending' AND leased_until >= now()`,
  );
  return rowCount ?? 0;
}

/**
 * Locks a worker's recorded deliveries in id order before anything else of the recording,
 * the order **Send again** locks its subject's rows in (WebhookService.redeliver): taken
 * statement by statement (the delivered ones, then each failed one and the rows behind
 * it) a recording could hold one delivery of a subject and wait for another that a Send
 * again of the subject holds while it waits for the first (docs/events.md, "Lock order").
 *
 * Returns the ids of those that still hold the lease they were claimed with. An outcome
 * that arrives after its lease ran out may find the delivery sent and recorded by another
 * worker since, claimed again, sent again by **Send again** or removed with its endpoint:
 * recorded anyway, a late timeout would set a delivered one pending again (sent once
 * more, a second head for its subject), and a late failure given up would undo a Send
 * again.
 */
export async function lockDeliveries(
  tx: Tx,
  claimed: Array<Pick<ClaimedDelivery, 'id' | 'lease'>>,
): Promise<Set<number>> {
  if (claimed.length === 0) return new Set();
  const { rows } = await tx.query<{ id: string; held: boolean }>(
    `SELECT d.id, coalesce(d.state = 'pending' AND d.leased_until = v.lease, false) AS held
     FROM webhook_deliveries d JOIN unnest($1::bigint[], $2::timestamptz[]) AS v(id, lease) ON v.id = d.id
     ORDER BY d.id FOR NO KEY UPDATE OF d`,
    [claimed.map((c) => c.id), claimed.map((c) => c.lease)],
  );
  return new Set(rows.filter((r) => r.held).map((r) => Number(r.id)));
}

/**
 * Locks the endpoints of a worker's recorded deliveries in id order, after the deliveries
 * (the order removing an endpoint keeps) and before any update: the successes clear their
 * endpoints' failing_since in one statement and each failure then updates its own, so two
 * instances recording for the same endpoints in other orders could each hold one that the
 * other waits for.
 */
export async function lockEndpoints(tx: Tx, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.query(
    'SELECT id FROM webhook_endpoints WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE',
    [[...new Set(ids)]],
  );
}

export interface AttemptOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** 2xx answers: the deliveries are done and their endpoints healthy again, in two statements. */
export async function markDelivered(
  tx: Tx,
  done: Array<{ delivery: ClaimedDelivery; outcome: AttemptOutcome }>,
): Promise<void> {
  if (done.length === 0) return;
  await lockSubjectHeads(tx, 'shared');
  await tx.query(
    `UPDATE webhook_deliveries d SET state = 'delivered', attempts = d.attempts + 1, leased_until = NULL,
       last_attempt_at = now_ms(), delivered_at = now_ms(), last_status = v.status, last_error = NULL,
       last_duration_ms = v.duration
     FROM unnest($1::bigint[], $2::int[], $3::int[]) AS v(id, status, duration)
     WHERE d.id = v.id`,
    [
      done.map((x) => x.delivery.id),
      done.map((x) => x.outcome.status),
      done.map((x) => x.outcome.durationMs),
    ],
  );
  await unqueueHeads(
    tx,
    done.map((x) => x.delivery),
  );
  await tx.query(
    'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ANY($1::bigint[]) AND failing_since IS NOT NULL',
    [[...new Set(done.map((x) => x.delivery.endpointId))]],
  );
}

/**
 * A failed attempt: retried at `retryAt`, or given up (`retryAt` null). The subject's
 * later deliveries wait with it (they are not due before it), so the claim query does
 * not keep finding them blocked. The endpoint is disabled, with the reason, once it has
 * failed without a success for `disableAfterMs`.
 */
export async function markFailed(
  tx: Tx,
  d: ClaimedDelivery,
  outcome: AttemptOutcome,
  retryAt: Date | null,
  disableAfterMs: number,
): Promise<void> {
  const error = (outcome.error ?? `HTTP ${outcome.status}`).slice(0, 500);
  if (!retryAt) await lockSubjectHeads(tx, 'shared');
  await tx.query(
    `UPDATE webhook_deliveries SET state = $2, attempts = attempts + 1, leased_until = NULL,
       next_attempt_at = coalesce($3, next_attempt_at), last_attempt_at = now_ms(),
       last_status = $4, last_error = $5, last_duration_ms = $6
     WHERE id = $1`,
    [d.id, retryAt ? 'pending' : 'failed', retryAt, outcome.status, error, outcome.durationMs],
  );
  if (!retryAt) await unqueueHeads(tx, [d]);
  if (retryAt) {
    await tx.query(
      `UPDATE webhook_deliveries SET next_attempt_at = $4
       WHERE endpoint_id = $1 AND subject = $2 AND state = 'pending' AND event_id > $3 AND next_attempt_at < $4`,
      [d.endpointId, d.subject, d.eventId, retryAt],
    );
  }
  await tx.query(
    `UPDATE webhook_endpoints SET
       failing_since = coalesce(failing_since, now_ms()),
       disabled_at = CASE WHEN failing_since < now_ms() - make_interval(secs => $2::float8 / 1000)
                          THEN now_ms() ELSE disabled_at END,
       disabled_reason = CASE WHEN failing_since < now_ms() - make_interval(secs => $2::float8 / 1000)
                          THEN 'Disabled automatically: every delivery failed since '
                               || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                               || '; last error: ' || $3
                          ELSE disabled_reason END
     WHERE id = $1 AND disabled_at IS NULL`,
    [d.endpointId, disableAfterMs, error],
  );
}

/**
 * Subject heads: a pending delivery is `queued` (not in the claim's index) while an earlier
 * pending one of its subject exists for its endpoint. The dispatcher queues the deliveries
 * it adds, and whatever ends a head (recording it delivered or given up, sending one again)
 * makes the subject's earliest pending delivery the head. Those two must not interleave:
 * a dispatch that still saw the head pending would queue a new delivery that the head's
 * recording, not seeing it yet, would leave queued for good. So the dispatcher takes this
 * lock exclusively and the others share it (recordings of several instances at once).
 */
export async function lockSubjectHeads(tx: Tx, mode: 'shared' | 'exclusive'): Promise<void> {
  const fn = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  await tx.query(`SELECT ${fn}(hashtext('tagtrail.events.subject-heads'))`);
}

/** Makes the earliest pending delivery of each (endpoint, subject) its head, if it is queued. */
export async function unqueueHeads(
  tx: Tx,
  subjects: Array<{ endpointId: number; subject: string }>,
): Promise<void> {
  if (subjects.length === 0) return;
  await tx.query(
    `UPDATE webhook_deliveries d SET queued = false
     FROM (SELECT DISTINCT * FROM unnest($1::bigint[], $2::text[]) AS s(endpoint_id, subject)) s
     WHERE d.id = (SELECT p.id FROM webhook_deliveries p
                   WHERE p.endpoint_id = s.endpoint_id AND p.subject = s.subject AND p.state = 'pending'
                   ORDER BY p.event_id LIMIT 1)
       AND d.queued`,
    [subjects.map((x) => x.endpointId), subjects.map((x) => x.subject)],
  );
}
