import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Caller } from '../caller.js';
import type { Database } from '../db/pool.js';
import { ApiError, conflict, fieldError, notFound } from '../errors.js';
import { liveLocationExists } from '../locations/repository.js';
import { READER_FAMILIES, type ReaderFamily } from './adapters/types.js';
import type { ReaderRef } from './directory.js';
import { generateMqttPassword, hashMqttPassword, readerUsername } from './mqtt-credentials.js';
import {
  deleteScanPoint,
  findReader,
  findReaderForWebhook,
  insertReader,
  insertScanPoint,
  listReaders,
  liveReaderTopics,
  notifyReadersChanged,
  type Reader,
  type ReaderChanges,
  type ReaderTopic,
  type ScanPoint,
  setMqttPasswordHash,
  softDeleteReader,
  updateReader,
  updateScanPoint,
} from './readers-repository.js';

export type { Reader, ReaderTopic, ScanPoint } from './readers-repository.js';

export interface CreateReaderInput {
  name?: string;
  family: string;
  identity: string;
  topic: string;
  /** Issue a secret so the reader may push to the HTTP webhook. */
  webhook?: boolean;
}

/** A reader's edit: absent fields are kept; `webhook` issues a secret (when it has none) or withdraws it. */
export interface UpdateReaderInput {
  name?: string;
  family?: string;
  identity?: string;
  topic?: string;
  webhook?: boolean;
}

/** A reader's broker login; the password is shown once (only its hash is stored). */
export interface MqttCredentials {
  username: string;
  password: string;
}

export interface CreatedReader {
  reader: Reader;
  /** Shown once: only its SHA-256 is stored. Null unless `webhook` was asked for. */
  webhookSecret: string | null;
  /** Every reader gets MQTT credentials when it is registered. */
  mqtt: MqttCredentials;
}

// Same single-line rule as asset and location names (API-SPEC Conventions).
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const SINGLE_LINE = /^\S(?:[^\x00-\x1F\x7F]*\S)?$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL = /[\x00-\x1F\x7F]/;
const ANTENNA_MAX = 65535;

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function singleLine(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw fieldError(field, 'required', `${field} is required`);
  }
  if (value.length > max) {
    throw fieldError(field, 'too_long', `${field} must be at most ${max} characters`, { max_length: max });
  }
  if (!SINGLE_LINE.test(value)) {
    throw fieldError(
      field,
      'invalid_value',
      `${field} must be one line without control characters or surrounding whitespace`,
    );
  }
  return value;
}

/**
 * An MQTT topic name a reader publishes to: 1..512 characters, no wildcards (`+`, `#`),
 * not a broker-reserved `$` topic, no control characters.
 */
export function checkTopic(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0)
    throw fieldError('topic', 'required', 'topic is required');
  if (value.length > 512) {
    throw fieldError('topic', 'too_long', 'topic must be at most 512 characters', { max_length: 512 });
  }
  if (value.includes('+') || value.includes('#')) {
    throw fieldError('topic', 'invalid_value', 'topic must be a topic name, without the wildcards + and #');
  }
  if (value.startsWith('$')) {
    throw fieldError('topic', 'invalid_value', 'topics starting with $ are reserved by the broker');
  }
  if (CONTROL.test(value))
    throw fieldError('topic', 'invalid_value', 'topic must not contain control characters');
  return value;
}

function checkFamily(value: unknown): ReaderFamily {
  if (typeof value !== 'string' || value === '') throw fieldError('family', 'required', 'family is required');
  if (!(READER_FAMILIES as readonly string[]).includes(value)) {
    throw fieldError('family', 'invalid_value', `family must be one of ${READER_FAMILIES.join(', ')}`, {
      allowed_values: [...READER_FAMILIES],
    });
  }
  return value as ReaderFamily;
}

function checkAntenna(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > ANTENNA_MAX) {
    throw fieldError('antenna', 'invalid_value', `antenna must be an integer from 0 to ${ANTENNA_MAX}`);
  }
  return value;
}

const pgError = (err: unknown) => err as { code?: string; constraint?: string };

/** A database refusal of a reader's write as the API answers it; anything else unchanged. */
function takenError(err: unknown, wanted: { topic?: string; identity?: string }): unknown {
  const e = pgError(err);
  if (e.code === '23505' && e.constraint === 'readers_topic_live') {
    return conflict(`topic ${wanted.topic} is already used by another reader`);
  }
  if (e.code === '23505' && e.constraint === 'readers_identity_live') {
    return conflict(`a reader with identity ${wanted.identity} already exists in this organization`);
  }
  if (e.code === '23503') return notFound('organization');
  return err;
}

/** A duplicate (reader, antenna) as the API answers it; anything else unchanged. */
function scanPointTaken(err: unknown, readerId: number, antenna: number | null): unknown {
  const e = pgError(err);
  if (e.code === '23505' && e.constraint === 'scan_points_antenna') {
    return conflict(
      antenna === null
        ? `reader ${readerId} already has a scan point for all antennas`
        : `reader ${readerId} already has a scan point for antenna ${antenna}`,
    );
  }
  return err;
}

/**
 * Readers (devices) and their scan points. Managed by operators through the CLI (and by
 * the web app later); the ingest transports read them to know which topics to serve.
 * Every change notifies READERS_CHANNEL so running transports pick it up at once.
 */
export class ReaderService {
  constructor(private readonly db: Database) {}

  async create(caller: Caller, input: CreateReaderInput): Promise<CreatedReader> {
    const orgId = caller.orgId;
    const family = checkFamily(input.family);
    const identity = singleLine('identity', input.identity, 255);
    const name = singleLine('name', input.name ?? identity, 255);
    const topic = checkTopic(input.topic);
    const webhookSecret = input.webhook ? randomBytes(32).toString('base64url') : null;
    const mqttPassword = generateMqttPassword();
    try {
      const reader = await this.db.withOrg(caller, async (tx) => {
        const created = await insertReader(tx, orgId, {
          name,
          family,
          identity,
          topic,
          webhookSecretHash: webhookSecret === null ? null : sha256Hex(webhookSecret),
          mqttPasswordHash: hashMqttPassword(mqttPassword),
        });
        await notifyReadersChanged(tx, orgId, created.id);
        return created;
      });
      return { reader, webhookSecret, mqtt: { username: readerUsername(reader.id), password: mqttPassword } };
    } catch (err) {
      throw takenError(err, { topic, identity });
    }
  }

  /**
   * Edits a live reader with create's rules and answers (a topic or identity another live
   * reader has is a conflict). The transports learn of it at once (NOTIFY): a new topic
   * or family applies to the next message. Returns the webhook secret when one is issued.
   */
  async update(
    orgId: number,
    readerId: number,
    input: UpdateReaderInput,
  ): Promise<{ reader: Reader; webhookSecret: string | null }> {
    const changes: ReaderChanges = {};
    if (input.name !== undefined) changes.name = singleLine('name', input.name, 255);
    if (input.family !== undefined) changes.family = checkFamily(input.family);
    if (input.identity !== undefined) changes.identity = singleLine('identity', input.identity, 255);
    if (input.topic !== undefined) changes.topic = checkTopic(input.topic);
    try {
      return await this.db.withOrg(orgId, async (tx) => {
        const before = await findReader(tx, orgId, readerId, { lock: true });
        if (!before) throw notFound('reader');
        let webhookSecret: string | null = null;
        // Asking for the webhook again keeps the secret the reader already has.
        if (input.webhook === true && !before.webhook) {
          webhookSecret = randomBytes(32).toString('base64url');
          changes.webhookSecretHash = sha256Hex(webhookSecret);
        } else if (input.webhook === false && before.webhook) {
          changes.webhookSecretHash = null;
        }
        await updateReader(tx, orgId, readerId, changes);
        await notifyReadersChanged(tx, orgId, readerId);
        return { reader: (await findReader(tx, orgId, readerId))!, webhookSecret };
      });
    } catch (err) {
      throw takenError(err, changes);
    }
  }

  list(orgId: number): Promise<Reader[]> {
    return this.db.withOrg(orgId, (tx) => listReaders(tx, orgId));
  }

  async get(orgId: number, readerId: number): Promise<Reader> {
    const reader = await this.db.withOrg(orgId, (tx) => findReader(tx, orgId, readerId));
    if (!reader) throw notFound('reader');
    return reader;
  }

  /** Soft delete: the reader's reads stay in history; its topic and identity are free again. */
  async delete(caller: Caller, readerId: number): Promise<void> {
    const orgId = caller.orgId;
    await this.db.withOrg(caller, async (tx) => {
      if (!(await softDeleteReader(tx, orgId, readerId))) throw notFound('reader');
      await notifyReadersChanged(tx, orgId, readerId);
    });
  }

  /**
   * Issues new MQTT credentials, replacing the current ones: the broker disconnects a
   * connection made with the old password as soon as it learns of the change (NOTIFY).
   */
  async rotateMqttCredentials(
    caller: Caller,
    readerId: number,
  ): Promise<{ reader: Reader; mqtt: MqttCredentials }> {
    const orgId = caller.orgId;
    const password = generateMqttPassword();
    const reader = await this.db.withOrg(caller, async (tx) => {
      if (!(await setMqttPasswordHash(tx, orgId, readerId, hashMqttPassword(password)))) {
        throw notFound('reader');
      }
      await notifyReadersChanged(tx, orgId, readerId);
      return (await findReader(tx, orgId, readerId))!;
    });
    return { reader, mqtt: { username: readerUsername(readerId), password } };
  }

  /** Revokes the reader's MQTT credentials: it is disconnected and cannot log in until rotated. */
  async revokeMqttCredentials(caller: Caller, readerId: number): Promise<void> {
    const orgId = caller.orgId;
    await this.db.withOrg(caller, async (tx) => {
      if (!(await setMqttPasswordHash(tx, orgId, readerId, null))) throw notFound('reader');
      await notifyReadersChanged(tx, orgId, readerId);
    });
  }

  /** Maps (reader, antenna) to a live location of the organization; antenna null covers every other port. */
  async addScanPoint(
    caller: Caller,
    readerId: number,
    input: { locationId: number; antenna?: number | null },
  ): Promise<ScanPoint> {
    const orgId = caller.orgId;
    const antenna = checkAntenna(input.antenna);
    try {
      return await this.db.withOrg(caller, async (tx) => {
        if (!(await findReader(tx, orgId, readerId, { lock: true }))) throw notFound('reader');
        if (!(await liveLocationExists(tx, orgId, input.locationId))) {
          throw fieldError('location_id', 'fk_not_found', `location ${input.locationId} does not exist`);
        }
        return insertScanPoint(tx, orgId, readerId, antenna, input.locationId);
      });
    } catch (err) {
      throw scanPointTaken(err, readerId, antenna);
    }
  }

  /** Moves a scan point to another antenna or location, with addScanPoint's rules. */
  async updateScanPoint(
    orgId: number,
    readerId: number,
    scanPointId: number,
    input: { locationId?: number; antenna?: number | null },
  ): Promise<ScanPoint> {
    const wanted = input.antenna === undefined ? undefined : checkAntenna(input.antenna);
    try {
      return await this.db.withOrg(orgId, async (tx) => {
        const reader = await findReader(tx, orgId, readerId, { lock: true });
        if (!reader) throw notFound('reader');
        const point = reader.scanPoints.find((p) => p.id === scanPointId);
        if (!point) throw notFound('scan point');
        const locationId = input.locationId ?? point.locationId;
        if (input.locationId !== undefined && !(await liveLocationExists(tx, orgId, locationId))) {
          throw fieldError('location_id', 'fk_not_found', `location ${locationId} does not exist`);
        }
        const antenna = wanted === undefined ? point.antenna : wanted;
        return (await updateScanPoint(tx, orgId, readerId, scanPointId, { antenna, locationId }))!;
      });
    } catch (err) {
      throw scanPointTaken(err, readerId, wanted ?? null);
    }
  }

  async removeScanPoint(caller: Caller, readerId: number, antenna: number | null): Promise<void> {
    const orgId = caller.orgId;
    const checked = checkAntenna(antenna);
    await this.db.withOrg(caller, async (tx) => {
      if (!(await findReader(tx, orgId, readerId, { lock: true }))) throw notFound('reader');
      if (!(await deleteScanPoint(tx, orgId, readerId, checked))) throw notFound('scan point');
    });
  }

  /** Every live reader's topic across organizations, for the MQTT transports. */
  liveTopics(): Promise<ReaderTopic[]> {
    return this.db.system((tx) => liveReaderTopics(tx));
  }

  /**
   * The reader a webhook request is for, once its bearer secret checks out: 404 for a
   * missing or deleted reader, 401 for a missing or wrong secret or a reader without one.
   * The comparison is between fixed-length SHA-256 digests, in constant time.
   */
  async authenticateWebhook(readerId: number, presented: string | undefined): Promise<ReaderRef> {
    const reader = await this.db.system((tx) => findReaderForWebhook(tx, readerId));
    if (!reader) throw notFound('reader');
    if (presented === undefined) throw new ApiError('unauthorized', 'Missing authorization header');
    const expected = reader.webhookSecretHash === null ? null : Buffer.from(reader.webhookSecretHash, 'hex');
    const given = createHash('sha256').update(presented, 'utf8').digest();
    const ok = expected !== null && expected.length === given.length && timingSafeEqual(expected, given);
    if (!ok) throw new ApiError('unauthorized', 'Invalid webhook secret');
    return { id: reader.id, orgId: reader.orgId, family: reader.family };
  }
}
