import type { Database, Tx } from '../db/pool.js';
import { fieldError, notFound } from '../errors.js';
import { toWire, toWireOrNull } from '../http/timestamps.js';
import { liveLocationExists } from '../locations/repository.js';
import { webhookSecretContext } from '../secrets/contexts.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { lockSubjectHeads } from './deliveries-repository.js';
import { lockDispatch } from './dispatcher.js';
import { lockMoveSubscriptions } from './move-subscriptions.js';
import { type EventType, wireEventId } from './outbox.js';
import { newSecret } from './signing.js';
import { type Resolver, savedUrlProblem } from './url-guard.js';

/** A webhook endpoint as the web app shows it (never its secret). */
export interface WebhookEndpoint {
  id: number;
  url: string;
  event_types: EventType[];
  location_id: number | null;
  enabled: boolean;
  disabled_at: string | null;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
  pending_deliveries: number;
}

export interface WebhookDelivery {
  id: number;
  event_id: string;
  event_type: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: string;
  last_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

export interface EndpointInput {
  url?: string;
  event_types?: EventType[];
  location_id?: number | null;
  enabled?: boolean;
}

const ENDPOINT_COLUMNS = `w.id, w.url, w.event_types, w.location_id, w.disabled_at, w.disabled_reason, w.failing_since,
  w.created_at, (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.state = 'pending') AS pending`;

// biome-ignore lint/suspicious/noExplicitAny: a row of the query above
function endpointView(r: any): WebhookEndpoint {
  return {
    id: r.id,
    url: r.url,
    event_types: r.event_types,
    location_id: r.location_id,
    enabled: r.disabled_at === null,
    disabled_at: toWireOrNull(r.disabled_at),
    disabled_reason: r.disabled_reason,
    failing_since: toWireOrNull(r.failing_since),
    created_at: toWire(r.created_at),
    pending_deliveries: Number(r.pending),
  };
}

/** Webhook endpoints and their delivery logs (docs/events.md); no HTTP here. */
export class WebhookService {
  constructor(
    private readonly db: Database,
    private readonly secrets: SecretBox,
    private readonly options: { allowPrivate: boolean; wake?: () => void; resolve?: Resolver },
  ) {}

  list(orgId: number): Promise<WebhookEndpoint[]> {
    return this.db.withOrg(orgId, async (tx) => {
      const { rows } = await tx.query(
        `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE w.org_id = $1 AND w.deleted_at IS NULL ORDER BY w.id`,
        [orgId],
      );
      return rows.map(endpointView);
    });
  }

  /** The secret is returned here only: it is not shown again. */
  async create(
    orgId: number,
    input: Required<Pick<EndpointInput, 'url' | 'event_types'>> & EndpointInput,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    await this.checkUrl(input.url);
    const secret = newSecret();
    return this.db.withOrg(orgId, async (tx) => {
      await lockMoveSubscriptions(tx, orgId);
      if (input.location_id != null) await this.checkLocation(tx, orgId, input.location_id);
      const { rows } = await tx.query<{ id: number }>(
        `INSERT INTO webhook_endpoints (org_id, url, event_types, location_id, secret, disabled_at)
         VALUES ($1, $2, $3, $4, $5, CASE WHEN $6 THEN NULL ELSE now_ms() END) RETURNING id`,
        [
          orgId,
          input.url,
          [...new Set(input.event_types)],
          input.location_id ?? null,
          this.secrets.seal(secret, webhookSecretContext(orgId)),
          input.enabled ?? true,
        ],
      );
      return { endpoint: await this.find(tx, orgId, rows[0]!.id), secret };
    });
  }

  /** Enabling again clears the automatic disabling and its reason, and sends what waited. */
  async update(orgId: number, id: number, input: EndpointInput): Promise<WebhookEndpoint> {
    if (input.url !== undefined) await this.checkUrl(input.url);
    return this.db.withOrg(orgId, async (tx) => {
      // Types or enabling can start wanting moves (move-subscriptions.ts).
      await lockMoveSubscriptions(tx, orgId);
      await this.find(tx, orgId, id, true);
      if (input.location_id != null) await this.checkLocation(tx, orgId, input.location_id);
      await tx.query(
        `UPDATE webhook_endpoints SET
           url = coalesce($3, url),
           event_types = coalesce($4, event_types),
           location_id = CASE WHEN $5 THEN $6 ELSE location_id END,
           disabled_at = CASE WHEN $7::boolean IS NULL THEN disabled_at
                              WHEN $7 THEN NULL ELSE coalesce(disabled_at, now_ms()) END,
           disabled_reason = CASE WHEN $7::boolean IS NULL THEN disabled_reason ELSE NULL END,
           failing_since = CASE WHEN $7 THEN NULL ELSE failing_since END
         WHERE org_id = $1 AND id = $2`,
        [
          orgId,
          id,
          input.url ?? null,
          input.event_types ? [...new Set(input.event_types)] : null,
          input.location_id !== undefined,
          input.location_id ?? null,
          input.enabled ?? null,
        ],
      );
      const updated = await this.find(tx, orgId, id);
      if (input.enabled) this.options.wake?.();
      return updated;
    });
  }

  /**
   * Its pending deliveries go with it: they would never be sent, and its delivery log is
   * not shown any more. The dispatcher's lock is taken first, so a dispatch that read the
   * endpoint as live has committed its deliveries before they are deleted, and the next
   * one sees it removed (no delivery is left behind for the retention). Those a worker has
   * in flight finish their attempt; recording it then finds no row.
   */
  async remove(orgId: number, id: number): Promise<void> {
    await this.db.withOrg(orgId, async (tx) => {
      await lockDispatch(tx);
      // The deliveries before the endpoint's row, and in id order: a worker recording
      // outcomes locks its deliveries in id order and then their endpoints (failing_since),
      // so the delete's own scan order, or the endpoint first, could deadlock with it.
      await tx.query(
        `DELETE FROM webhook_deliveries WHERE id = ANY(ARRAY(
           SELECT id FROM webhook_deliveries WHERE org_id = $1 AND endpoint_id = $2 AND state = 'pending'
           ORDER BY id FOR UPDATE))`,
        [orgId, id],
      );
      const { rowCount } = await tx.query(
        'UPDATE webhook_endpoints SET deleted_at = now_ms() WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL',
        [orgId, id],
      );
      if (!rowCount) throw notFound('webhook endpoint');
    });
  }

  /** The delivery log, newest first. */
  deliveries(
    orgId: number,
    id: number,
    page: { limit: number; offset: number },
  ): Promise<{ rows: WebhookDelivery[]; total: number }> {
    return this.db.withOrg(orgId, async (tx) => {
      await this.find(tx, orgId, id);
      const { rows } = await tx.query(
        `SELECT d.*, e.type AS event_type, count(*) OVER () AS total
         FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
         WHERE d.org_id = $1 AND d.endpoint_id = $2 ORDER BY d.id DESC LIMIT $3 OFFSET $4`,
        [orgId, id, page.limit, page.offset],
      );
      let total = Number(rows[0]?.total ?? 0);
      if (rows.length === 0 && page.offset > 0) {
        const counted = await tx.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM webhook_deliveries WHERE org_id = $1 AND endpoint_id = $2',
          [orgId, id],
        );
        total = counted.rows[0]!.n;
      }
      return { rows: rows.map(deliveryView), total };
    });
  }

  /** Sends the event again, with the same id (receivers dedupe on it). */
  redeliver(orgId: number, id: number, deliveryId: number): Promise<WebhookDelivery> {
    return this.db.withOrg(orgId, async (tx) => {
      await this.find(tx, orgId, id);
      await lockSubjectHeads(tx, 'shared');
      // The delivery and its subject's pending ones, in id order before any is changed: the
      // order a worker recording outcomes locks its deliveries in (lockDeliveries). Updating
      // this one, then those whose flag changes, could hold this one while waiting for the
      // subject's head that a recording holds while it waits for this one. And the head
      // is found below only once no recording of the subject is under way: one that
      // committed meanwhile is seen (its new head queued again behind this one).
      await tx.query(
        `SELECT d.id FROM webhook_deliveries d
         WHERE d.id = ANY(ARRAY(
                 SELECT x.id FROM webhook_deliveries x WHERE x.org_id = $1 AND x.endpoint_id = $2 AND x.id = $3
                 UNION ALL
                 SELECT p.id FROM webhook_deliveries p
                 WHERE p.org_id = $1 AND p.endpoint_id = $2 AND p.state = 'pending' AND p.subject = (
                   SELECT x.subject FROM webhook_deliveries x WHERE x.org_id = $1 AND x.endpoint_id = $2 AND x.id = $3)))
         ORDER BY d.id FOR NO KEY UPDATE`,
        [orgId, id, deliveryId],
      );
      const { rows } = await tx.query(
        `WITH d AS (
           UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = now_ms(), created_at = now_ms(), leased_until = NULL
           WHERE org_id = $1 AND endpoint_id = $2 AND id = $3
             AND NOT (state = 'pending' AND leased_until > now())
           RETURNING *)
         SELECT d.*, e.type AS event_type FROM d JOIN events e ON e.id = d.event_id`,
        [orgId, id, deliveryId],
      );
      if (!rows[0]) {
        const exists = await tx.query(
          'SELECT 1 FROM webhook_deliveries WHERE org_id = $1 AND endpoint_id = $2 AND id = $3',
          [orgId, id, deliveryId],
        );
        if (!exists.rowCount) throw notFound('delivery');
        const again = await tx.query(
          `SELECT d.*, e.type AS event_type FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $1`,
          [deliveryId],
        );
        return deliveryView(again.rows[0]); // being sent right now: nothing to do
      }
      // Pending again among its subject's later ones: the earliest pending is the head
      // (possibly this one, ahead of one in flight), the others wait behind it.
      await tx.query(
        `UPDATE webhook_deliveries d SET queued = (d.id <> h.id)
         FROM (SELECT p.id FROM webhook_deliveries p
               WHERE p.org_id = $1 AND p.endpoint_id = $2 AND p.subject = $3 AND p.state = 'pending'
               ORDER BY p.event_id LIMIT 1) h
         WHERE d.org_id = $1 AND d.endpoint_id = $2 AND d.subject = $3 AND d.state = 'pending'
           AND d.queued <> (d.id <> h.id)`,
        [orgId, id, rows[0].subject],
      );
      this.options.wake?.();
      return deliveryView(rows[0]);
    });
  }

  private async checkUrl(url: string): Promise<void> {
    const problem = await savedUrlProblem(url, this.options.allowPrivate, this.options.resolve);
    if (problem) throw fieldError('url', 'invalid_value', `url ${problem}`, { url });
  }

  private async checkLocation(tx: Tx, orgId: number, locationId: number): Promise<void> {
    if (!(await liveLocationExists(tx, orgId, locationId)))
      throw fieldError('location_id', 'fk_not_found', 'location_id names no live location');
  }

  private async find(tx: Tx, orgId: number, id: number, lock = false): Promise<WebhookEndpoint> {
    const { rows } = await tx.query(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints w
       WHERE w.org_id = $1 AND w.id = $2 AND w.deleted_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
      [orgId, id],
    );
    if (!rows[0]) throw notFound('webhook endpoint');
    return endpointView(rows[0]);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a webhook_deliveries row joined with its event's type
function deliveryView(r: any): WebhookDelivery {
  return {
    id: r.id,
    event_id: wireEventId(r.event_id),
    event_type: r.event_type,
    state: r.state,
    attempts: r.attempts,
    created_at: toWire(r.created_at),
    last_attempt_at: toWireOrNull(r.last_attempt_at),
    last_status: r.last_status,
    last_error: r.last_error,
    last_duration_ms: r.last_duration_ms,
    next_attempt_at: r.state === 'pending' ? toWire(r.next_attempt_at) : null,
    delivered_at: toWireOrNull(r.delivered_at),
  };
}
