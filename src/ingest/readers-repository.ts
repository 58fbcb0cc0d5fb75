import type { Tx } from '../db/pool.js';
import type { ReaderFamily } from './adapters/types.js';
import type { RateBuckets } from './reader-counters.js';

/** Channel the readers service notifies when a reader or its topic changes (the consumer listens). */
export const READERS_CHANNEL = 'tagtrail_readers';

export interface ScanPoint {
  id: number;
  readerId: number;
  /** null: every antenna of the reader without a point of its own. */
  antenna: number | null;
  locationId: number;
  createdAt: Date;
}

export interface Reader {
  id: number;
  orgId: number;
  name: string;
  family: ReaderFamily;
  identity: string;
  topic: string;
  /** Whether the reader may push to the HTTP webhook (a secret was issued). */
  webhook: boolean;
  /** Whether the reader has MQTT credentials (issued and not revoked). */
  mqtt: boolean;
  createdAt: Date;
  lastMessageAt: Date | null;
  goodReads: number;
  badReads: number;
  unknownReads: number;
  /** Receipt time of the latest message with refused reads. */
  lastErrorAt: Date | null;
  /** Reads and errors of the latest two minutes (reader-counters.ts `perMinute`). */
  rates: RateBuckets;
  scanPoints: ScanPoint[];
}

/** What the MQTT transport needs of every live reader, across organizations. */
export interface ReaderTopic {
  id: number;
  orgId: number;
  family: ReaderFamily;
  topic: string;
  /** The `$7$` hash of its MQTT password; null or absent: it may not log in to the broker. */
  mqttPasswordHash?: string | null;
}

export interface NewReader {
  name: string;
  family: ReaderFamily;
  identity: string;
  topic: string;
  webhookSecretHash: string | null;
  mqttPasswordHash: string | null;
}

interface ReaderRow {
  id: number;
  org_id: number;
  name: string;
  family: ReaderFamily;
  identity: string;
  topic: string;
  webhook: boolean;
  mqtt: boolean;
  created_at: Date;
  last_message_at: Date | null;
  good_reads: number;
  bad_reads: number;
  unknown_reads: number;
  last_error_at: Date | null;
  rate_minute: Date | null;
  rate_reads: number;
  rate_errors: number;
  rate_prev_reads: number;
  rate_prev_errors: number;
}

interface ScanPointRow {
  id: number;
  reader_id: number;
  antenna: number | null;
  location_id: number;
  created_at: Date;
}

const READER_COLUMNS = `id, org_id, name, family, identity, topic, webhook_secret_hash IS NOT NULL AS webhook,
  mqtt_password_hash IS NOT NULL AS mqtt, created_at, last_message_at, good_reads, bad_reads, unknown_reads,
  last_error_at, rate_minute, rate_reads, rate_errors, rate_prev_reads, rate_prev_errors`;

const toScanPoint = (r: ScanPointRow): ScanPoint => ({
  id: r.id,
  readerId: r.reader_id,
  antenna: r.antenna,
  locationId: r.location_id,
  createdAt: r.created_at,
});

const toReader = (r: ReaderRow, points: ScanPoint[]): Reader => ({
  id: r.id,
  orgId: r.org_id,
  name: r.name,
  family: r.family,
  identity: r.identity,
  topic: r.topic,
  webhook: r.webhook,
  mqtt: r.mqtt,
  createdAt: r.created_at,
  lastMessageAt: r.last_message_at,
  goodReads: r.good_reads,
  badReads: r.bad_reads,
  unknownReads: r.unknown_reads,
  lastErrorAt: r.last_error_at,
  rates: {
    minute: r.rate_minute,
    reads: r.rate_reads,
    errors: r.rate_errors,
    prevReads: r.rate_prev_reads,
    prevErrors: r.rate_prev_errors,
  },
  scanPoints: points,
});

async function scanPointsOfReaders(tx: Tx, orgId: number, readerIds: number[]): Promise<ScanPoint[]> {
  if (readerIds.length === 0) return [];
  const { rows } = await tx.query<ScanPointRow>(
    `SELECT id, reader_id, antenna, location_id, created_at FROM scan_points
     WHERE org_id = $1 AND reader_id = ANY($2::bigint[]) ORDER BY reader_id, antenna NULLS FIRST`,
    [orgId, readerIds],
  );
  return rows.map(toScanPoint);
}

async function withScanPoints(tx: Tx, orgId: number, rows: ReaderRow[]): Promise<Reader[]> {
  const points = await scanPointsOfReaders(
    tx,
    orgId,
    rows.map((r) => r.id),
  );
  return rows.map((r) =>
    toReader(
      r,
      points.filter((p) => p.readerId === r.id),
    ),
  );
}

/** Inserts a reader; a live duplicate topic or identity raises 23505 (readers_topic_live, readers_identity_live). */
export async function insertReader(tx: Tx, orgId: number, reader: NewReader): Promise<Reader> {
  const { rows } = await tx.query<ReaderRow>(
    `INSERT INTO readers (org_id, name, family, identity, topic, webhook_secret_hash, mqtt_password_hash)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${READER_COLUMNS}`,
    [
      orgId,
      reader.name,
      reader.family,
      reader.identity,
      reader.topic,
      reader.webhookSecretHash,
      reader.mqttPasswordHash,
    ],
  );
  return toReader(rows[0]!, []);
}

export async function listReaders(tx: Tx, orgId: number): Promise<Reader[]> {
  const { rows } = await tx.query<ReaderRow>(
    `SELECT ${READER_COLUMNS} FROM readers WHERE org_id = $1 AND deleted_at IS NULL ORDER BY id`,
    [orgId],
  );
  return withScanPoints(tx, orgId, rows);
}

/** A live reader of the organization, or null. */
export async function findReader(
  tx: Tx,
  orgId: number,
  readerId: number,
  options: { lock?: boolean } = {},
): Promise<Reader | null> {
  const { rows } = await tx.query<ReaderRow>(
    `SELECT ${READER_COLUMNS} FROM readers WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL
     ${options.lock ? 'FOR UPDATE' : ''}`,
    [orgId, readerId],
  );
  const row = rows[0];
  return row ? (await withScanPoints(tx, orgId, [row]))[0]! : null;
}

/** The columns a reader's edit may change; absent ones are kept. */
export interface ReaderChanges {
  name?: string;
  family?: ReaderFamily;
  identity?: string;
  topic?: string;
  /** A new secret's hash, or null to withdraw the webhook. */
  webhookSecretHash?: string | null;
}

/**
 * Changes a live reader's columns; false when there is no such reader. A live duplicate
 * topic or identity raises 23505 (readers_topic_live, readers_identity_live), as on insert.
 */
export async function updateReader(
  tx: Tx,
  orgId: number,
  readerId: number,
  changes: ReaderChanges,
): Promise<boolean> {
  const columns: [string, unknown][] = [];
  if (changes.name !== undefined) columns.push(['name', changes.name]);
  if (changes.family !== undefined) columns.push(['family', changes.family]);
  if (changes.identity !== undefined) columns.push(['identity', changes.identity]);
  if (changes.topic !== undefined) columns.push(['topic', changes.topic]);
  if (changes.webhookSecretHash !== undefined)
    columns.push(['webhook_secret_hash', changes.webhookSecretHash]);
  if (columns.length === 0) return (await findReader(tx, orgId, readerId)) !== null;
  const set = columns.map(([c], i) => `${c} = $${i + 3}`).join(', ');
  return updateLiveReader(
    tx,
    orgId,
    readerId,
    set,
    columns.map(([, v]) => v),
  );
}

/** Soft-deletes a live reader (its topic and identity become free at once); false when there is none. */
export function softDeleteReader(tx: Tx, orgId: number, readerId: number): Promise<boolean> {
  return updateLiveReader(tx, orgId, readerId, 'deleted_at = now_ms()');
}

/** Replaces (or with null revokes) a live reader's MQTT password hash; false when there is no such reader. */
export function setMqttPasswordHash(
  tx: Tx,
  orgId: number,
  readerId: number,
  hash: string | null,
): Promise<boolean> {
  return updateLiveReader(tx, orgId, readerId, 'mqtt_password_hash = $3', [hash]);
}

/** `UPDATE readers SET <set>` (its values from $3 on) on a live reader; false when there is none. */
async function updateLiveReader(
  tx: Tx,
  orgId: number,
  readerId: number,
  set: string,
  values: unknown[] = [],
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE readers SET ${set} WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`,
    [orgId, readerId, ...values],
  );
  return (rowCount ?? 0) > 0;
}

/** Inserts a scan point; a duplicate (reader, antenna) raises 23505 on scan_points_antenna. */
export async function insertScanPoint(
  tx: Tx,
  orgId: number,
  readerId: number,
  antenna: number | null,
  locationId: number,
): Promise<ScanPoint> {
  const { rows } = await tx.query<ScanPointRow>(
    `INSERT INTO scan_points (org_id, reader_id, antenna, location_id) VALUES ($1, $2, $3, $4)
     RETURNING id, reader_id, antenna, location_id, created_at`,
    [orgId, readerId, antenna, locationId],
  );
  return toScanPoint(rows[0]!);
}

/**
 * Changes a scan point's antenna and location; null when the reader has no such point.
 * A duplicate (reader, antenna) raises 23505 on scan_points_antenna.
 */
export async function updateScanPoint(
  tx: Tx,
  orgId: number,
  readerId: number,
  scanPointId: number,
  point: { antenna: number | null; locationId: number },
): Promise<ScanPoint | null> {
  const { rows } = await tx.query<ScanPointRow>(
    `UPDATE scan_points SET antenna = $4, location_id = $5 WHERE org_id = $1 AND reader_id = $2 AND id = $3
     RETURNING id, reader_id, antenna, location_id, created_at`,
    [orgId, readerId, scanPointId, point.antenna, point.locationId],
  );
  return rows[0] ? toScanPoint(rows[0]) : null;
}

/** Removes the scan point of (reader, antenna); false when there is none. */
export async function deleteScanPoint(
  tx: Tx,
  orgId: number,
  readerId: number,
  antenna: number | null,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    'DELETE FROM scan_points WHERE org_id = $1 AND reader_id = $2 AND antenna IS NOT DISTINCT FROM $3',
    [orgId, readerId, antenna],
  );
  return (rowCount ?? 0) > 0;
}

/** Tells every instance's transport that readers changed; delivered when the transaction commits. */
export async function notifyReadersChanged(tx: Tx, orgId: number, readerId: number): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [READERS_CHANNEL, `${orgId}:${readerId}`]);
}

// ---------------------------------------------------------------------------
// System level: the transports serve every organization, so these run outside one.

/** Every live reader's topic and MQTT password hash, across organizations (run in a system transaction). */
export async function liveReaderTopics(tx: Tx): Promise<ReaderTopic[]> {
  const { rows } = await tx.query<{
    id: number;
    org_id: number;
    family: ReaderFamily;
    topic: string;
    mqtt_password_hash: string | null;
  }>(
    'SELECT id, org_id, family, topic, mqtt_password_hash FROM readers WHERE deleted_at IS NULL ORDER BY id',
  );
  return rows.map((r) => ({
    id: r.id,
    orgId: r.org_id,
    family: r.family,
    topic: r.topic,
    mqttPasswordHash: r.mqtt_password_hash,
  }));
}

export interface WebhookReader {
  id: number;
  orgId: number;
  family: ReaderFamily;
  webhookSecretHash: string | null;
}

/** A live reader by id alone, for the webhook, which learns the organization from the reader. */
export async function findReaderForWebhook(tx: Tx, readerId: number): Promise<WebhookReader | null> {
  const { rows } = await tx.query<{
    id: number;
    org_id: number;
    family: ReaderFamily;
    webhook_secret_hash: string | null;
  }>('SELECT id, org_id, family, webhook_secret_hash FROM readers WHERE id = $1 AND deleted_at IS NULL', [
    readerId,
  ]);
  const r = rows[0];
  return r ? { id: r.id, orgId: r.org_id, family: r.family, webhookSecretHash: r.webhook_secret_hash } : null;
}
