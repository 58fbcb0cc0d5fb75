import type { Asset } from '../assets/schemas.js';
import { int8Array, textArray } from '../db/binary-arrays.js';
import type { Tx } from '../db/pool.js';
import { preparedQuery } from '../db/prepared.js';
import { textPer } from '../db/statement-text.js';
import { toWire } from '../http/timestamps.js';
import type { Location } from '../locations/schemas.js';
import { LIVE_CHANNEL, type LiveChange, MAX_LISTED_IDS } from './dispatcher.js';
import type { MovesWanted } from './move-subscriptions.js';

/** Every event type (docs/events.md); the JSON Schema in schema.ts describes each payload. */
export const EVENT_TYPES = [
  'asset.moved',
  'asset.first_seen',
  'asset.not_seen',
  'asset.created',
  'asset.updated',
  'asset.deleted',
  'location.created',
  'location.updated',
  'location.deleted',
  'tag.attached',
  'tag.detached',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Where a read came from: a reader's antenna, a handheld submission or an import file. */
export type ReadSource =
  | { type: 'reader'; reader_id: number; antenna: number | null }
  | { type: 'handheld' }
  | { type: 'import' };

export interface NewEvent {
  type: EventType;
  /** What a receiver gets in order: 'asset:12', 'location:3', 'tag:7'. */
  subject: string;
  /** Locations the event concerns, for endpoints filtered to a subtree. */
  locationIds?: number[];
  payload: object;
}

/** An asset's master-data event: the resource as the API returns it, filed under its location. */
export const assetEvent = (
  type: 'asset.created' | 'asset.updated' | 'asset.deleted',
  a: Asset,
): NewEvent => ({
  type,
  subject: `asset:${a.id}`,
  locationIds: a.location_id === null ? [] : [a.location_id],
  payload: a,
});

/** A location's master-data event: the resource as the API returns it. */
export const locationEvent = (
  type: 'location.created' | 'location.updated' | 'location.deleted',
  l: Location,
): NewEvent => ({ type, subject: `location:${l.id}`, locationIds: [l.id], payload: l });

/**
 * Writes master-data events in the caller's transaction: they commit with the change or
 * not at all. The caller holds the subject's row lock, so one subject's events are
 * numbered in commit order.
 */
export async function recordEvents(tx: Tx, orgId: number, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  if (events.length === 1) {
    // One event (a PATCH, a delete) as plain values: the unnest form was planned anew on
    // every call, its generic plan guessing a hundred rows (0.2 ms of planning a write).
    const [e] = events as [NewEvent];
    await tx.query(
      preparedQuery(
        `INSERT INTO events (org_id, type, occurred_at, subject, location_ids, payload)
     VALUES ($1, $2, now_ms(), $3, $4::bigint[], $5::jsonb)`,
        [orgId, e.type, e.subject, e.locationIds ?? [], JSON.stringify(e.payload)],
      ),
    );
    return;
  }
  await tx.query(
    preparedQuery(
      `INSERT INTO events (org_id, type, occurred_at, subject, location_ids, payload)
     SELECT $1, v.type, now_ms(), v.subject,
            ARRAY(SELECT jsonb_array_elements_text(v.locations)::bigint), v.payload
     FROM unnest($2::text[], $3::text[], $4::jsonb[], $5::jsonb[]) WITH ORDINALITY AS v(type, subject, locations, payload, n)
     ORDER BY v.n`,
      [
        orgId,
        events.map((e) => e.type),
        events.map((e) => e.subject),
        events.map((e) => JSON.stringify(e.locationIds ?? [])),
        events.map((e) => JSON.stringify(e.payload)),
      ],
    ),
  );
}

const eventWithRowKeySql = textPer(
  (
    table: 'assets' | 'locations',
  ) => `INSERT INTO events (org_id, type, occurred_at, subject, location_ids, payload)
     SELECT $1, $2, now_ms(), $3, $4::bigint[], jsonb_set($5::jsonb, '{external_key}', to_jsonb(r.external_key))
     FROM ${table} r WHERE r.org_id = $1 AND r.id = $6`,
);

/**
 * recordEvents for one event about row `id` of `table`, whose payload's external_key is
 * the one the row has when the statement runs: for a create whose key is set earlier in
 * the same transaction by a statement whose answer has not come back yet (an auto key).
 */
export async function recordEventWithRowKey(
  tx: Tx,
  orgId: number,
  event: NewEvent,
  table: 'assets' | 'locations',
  id: number,
): Promise<void> {
  await tx.query(
    preparedQuery(eventWithRowKeySql(table), [
      orgId,
      event.type,
      event.subject,
      event.locationIds ?? [],
      JSON.stringify(event.payload),
      id,
    ]),
  );
}

/** One change of an asset's current location; `from` null is its first sighting. */
export interface Move {
  assetId: number;
  from: number | null;
  to: number;
  at: number;
  source: ReadSource | null;
}

/**
 * asset.moved and asset.first_seen for a whole ingest batch in one statement: the keys
 * of the asset and both locations are joined in, so the payload reads like a row of the
 * asset-locations report and the receiver needs no lookup. Only the types some endpoint
 * wants are stored (movesWanted, move-subscriptions.ts); the live views are told of all
 * of them when the transaction commits (announceMoves).
 */
export async function recordMoves(tx: Tx, orgId: number, moves: Move[], wanted: MovesWanted): Promise<void> {
  if (moves.length === 0) return;
  const announced = announceMoves(tx, orgId, moves);
  announced.catch(() => undefined);
  const stored = moves.filter((m) => (moveType(m) === 'asset.first_seen' ? wanted.firstSeen : wanted.moved));
  if (stored.length > 0) {
    await tx.query(
      `INSERT INTO events (org_id, type, occurred_at, subject, location_ids, payload)
     SELECT $1, CASE WHEN v.from_id IS NULL THEN 'asset.first_seen' ELSE 'asset.moved' END, v.at_wire::timestamptz,
            'asset:' || v.asset_id,
            CASE WHEN v.from_id IS NULL THEN ARRAY[v.to_id] ELSE ARRAY[v.from_id, v.to_id] END,
            jsonb_build_object(
              'asset_id', a.id, 'asset_external_key', a.external_key, 'asset_name', a.name,
              'from_location_id', v.from_id, 'from_location_external_key', f.external_key,
              'location_id', v.to_id, 'location_external_key', t.external_key,
              'observed_at', v.at_wire, 'source', v.source)
     FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::jsonb[])
          WITH ORDINALITY AS v(asset_id, from_id, to_id, at_wire, source, n)
     JOIN assets a ON a.org_id = $1 AND a.id = v.asset_id
     JOIN locations t ON t.org_id = $1 AND t.id = v.to_id
     LEFT JOIN locations f ON f.org_id = $1 AND f.id = v.from_id
     ORDER BY v.n`,
      [
        orgId,
        int8Array(stored.map((m) => m.assetId)),
        int8Array(stored.map((m) => m.from)),
        int8Array(stored.map((m) => m.to)),
        // The instant as the wire writes it, read as the event's time too.
        textArray(stored.map((m) => toWire(m.at))),
        stored.map((m) => (m.source === null ? null : JSON.stringify(m.source))),
      ],
    );
  }
  await announced;
}

/**
 * The live views' notice of a batch's moves, sent when its transaction commits (NOTIFY is
 * transactional): what the dispatcher tells of the other events, told here because moves
 * are stored only where an endpoint wants them.
 */
function announceMoves(tx: Tx, orgId: number, moves: Move[]): Promise<unknown> {
  const assets = new Set<number>();
  const locations = new Set<number>();
  for (const m of moves) {
    assets.add(m.assetId);
    if (m.from !== null) locations.add(m.from);
    locations.add(m.to);
  }
  const change: LiveChange = {
    org_id: orgId,
    types: [...new Set(moves.map(moveType))],
    asset_ids: [...assets].slice(0, MAX_LISTED_IDS),
    location_ids: [...locations].slice(0, MAX_LISTED_IDS),
    truncated: assets.size > MAX_LISTED_IDS,
  };
  return tx.query(preparedQuery('SELECT pg_notify($1, $2)', [LIVE_CHANNEL, JSON.stringify(change)]));
}

/** A move's event type: its first sighting or a change of place (as recordMoves' CASE). */
const moveType = (m: Move): 'asset.first_seen' | 'asset.moved' =>
  m.from === null ? 'asset.first_seen' : 'asset.moved';

/** The id receivers see (and dedupe on): the same for every attempt and redelivery. */
export const wireEventId = (id: number): string => `evt_${id}`;

export interface StoredEvent {
  id: number;
  org_id: number;
  type: EventType;
  occurred_at: Date;
  payload: object;
}

/** An event as it is sent: a webhook's body and a live view's message. */
export function eventBody(e: StoredEvent): string {
  return JSON.stringify({
    id: wireEventId(e.id),
    type: e.type,
    organization_id: e.org_id,
    occurred_at: toWire(e.occurred_at.getTime()),
    data: e.payload,
  });
}
