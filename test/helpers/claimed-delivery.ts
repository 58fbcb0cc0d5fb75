import type { Database } from '../../src/db/pool.js';
import type { ClaimedDelivery } from '../../src/events/deliveries-repository.js';

/** A delivery as a worker holds it after claiming it: the row as it is now, with its lease. */
export async function claimedDelivery(db: Database, id: number): Promise<ClaimedDelivery> {
  const { rows } = await db.pool.query(
    `SELECT d.id, d.endpoint_id, d.event_id, d.subject, d.attempts, d.created_at, d.leased_until::text AS lease,
            w.url, w.secret,
            e.org_id, e.type, e.occurred_at, e.payload
     FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
     WHERE d.id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) throw new Error(`no delivery ${id}`);
  return {
    id: Number(row.id),
    endpointId: Number(row.endpoint_id),
    eventId: Number(row.event_id),
    subject: row.subject,
    attempts: row.attempts,
    createdAt: row.created_at,
    lease: row.lease,
    url: row.url,
    secret: row.secret,
    event: {
      id: Number(row.event_id),
      org_id: Number(row.org_id),
      type: row.type,
      occurred_at: row.occurred_at,
      payload: row.payload,
    },
  };
}
