/**
 * Shared setup for the ingest tests: an organization with locations, assets with RFID
 * tags (rows inserted by the table owner, so the tests do not depend on the master-data
 * routes), readers through the readers service, and the tracking read API.
 */
import { randomBytes } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { expect } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { connectMqtt } from '../../src/ingest/mqtt-connection.js';
import type { MqttCredentials, Reader } from '../../src/ingest/readers-service.js';
import { bearer, type TestApp } from '../helpers/app.js';

export const unique = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

/** An instant (epoch ms) as a reader payload's time. */
export const iso = (ms: number) => new Date(ms).toISOString();

/** A created reader as IngestService.readerMessage takes it. */
export const readerRef = (r: Reader) => ({ id: r.id, orgId: r.orgId, family: r.family });

export interface IngestFixture {
  orgId: number;
  token: string;
  location(key?: string): Promise<number>;
  /** An asset carrying one RFID tag with this value. */
  asset(tag: string, key?: string): Promise<number>;
  /** A reader on a fresh topic, with one scan point per entry (antenna null: all ports). */
  reader(
    family: Reader['family'],
    points: Array<[antenna: number | null, locationId: number]>,
    options?: { webhook?: boolean },
  ): Promise<{ reader: Reader; topic: string; secret: string | null; mqtt: MqttCredentials }>;
  /** Where the asset is now: GET /api/v1/assets/:id when the route exists, else the row. */
  currentLocation(assetId: number): Promise<number | null>;
  history(assetId: number): Promise<HistoryRow[]>;
  report(assetId: number): Promise<ReportRow[]>;
  readerCounters(readerId: number): Promise<{ good: number; bad: number; unknown: number }>;
  rawMessages(readerId: number): Promise<RawRow[]>;
}

export interface HistoryRow {
  event_observed_at: string;
  location_id: number | null;
  location_external_key: string | null;
  duration_seconds: number;
}

export interface ReportRow {
  asset_id: number;
  asset_last_seen: string;
  location_id: number | null;
}

export interface RawRow {
  source: string;
  payload: string;
  good_reads: number;
  bad_reads: number;
  unknown_reads: number;
  errors: string[] | null;
}

export async function ingestFixture(t: TestApp): Promise<IngestFixture> {
  const org = await t.createOrg(unique('ingest'));
  const { token } = await org.key();
  const pool = t.database.db.pool;
  const insert = async (table: 'locations' | 'assets', key: string) => {
    const { rows } = await pool.query<{ id: number }>(
      `INSERT INTO ${table} (org_id, external_key, name, valid_from) VALUES ($1, $2, $3, now() - interval '1 day')
       RETURNING id`,
      [org.id, key, `Name of ${key}`],
    );
    return rows[0]!.id;
  };
  const get = async (url: string) => {
    const res = await t.app.inject({ method: 'GET', url, headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const assetRoute = t.app.hasRoute({ method: 'GET', url: '/api/v1/assets/:asset_id' });
  return {
    orgId: org.id,
    token,
    location: (key = unique('LOC')) => insert('locations', key),
    async asset(tag, key = unique('ASSET')) {
      const id = await insert('assets', key);
      await pool.query('INSERT INTO tags (org_id, tag_type, value, asset_id) VALUES ($1, $2, $3, $4)', [
        org.id,
        'rfid',
        tag,
        id,
      ]);
      return id;
    },
    async reader(family, points, options = {}) {
      const topic = `tagtrail-test/${unique(family)}/events`;
      const created = await t.services.readers.create(cliCaller(org.id), {
        family,
        identity: unique('reader'),
        topic,
        webhook: options.webhook,
      });
      for (const [antenna, locationId] of points) {
        await t.services.readers.addScanPoint(cliCaller(org.id), created.reader.id, { antenna, locationId });
      }
      return { reader: created.reader, topic, secret: created.webhookSecret, mqtt: created.mqtt };
    },
    async currentLocation(assetId) {
      if (assetRoute) return (await get(`/api/v1/assets/${assetId}`)).data.location_id;
      const { rows } = await pool.query<{ location_id: number | null }>(
        'SELECT location_id FROM assets a LEFT JOIN asset_positions p ON p.asset_id = a.id WHERE a.id = $1',
        [assetId],
      );
      return rows[0]!.location_id;
    },
    async history(assetId) {
      return (await get(`/api/v1/assets/${assetId}/history?limit=200`)).data;
    },
    async report(assetId) {
      return (await get(`/api/v1/reports/asset-locations?asset_id=${assetId}`)).data;
    },
    async readerCounters(readerId) {
      const { rows } = await pool.query<{ good: number; bad: number; unknown: number }>(
        'SELECT good_reads AS good, bad_reads AS bad, unknown_reads AS unknown FROM readers WHERE id = $1',
        [readerId],
      );
      return rows[0]!;
    },
    async rawMessages(readerId) {
      const { rows } = await pool.query<RawRow>(
        `SELECT source, payload, good_reads, bad_reads, unknown_reads, errors FROM raw_log
         WHERE reader_id = $1 ORDER BY received_at, id, message`,
        [readerId],
      );
      return rows;
    },
  };
}

/**
 * Polls `probe` until it returns a value `done` accepts; fails with the last value after
 * `timeoutMs`. The default is generous (20 s): what is waited for is an outcome, not a
 * speed, and a loaded CI machine can take seconds over what is quick on a quiet one.
 */
export async function waitFor<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await probe();
    if (done(last)) return last;
    if (Date.now() > deadline) {
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A reader-like MQTT client; with `login`, logged in as that reader, its client id its
 * user name plus a suffix (as the embedded broker requires).
 */
export function publisher(
  url: string,
  options: { clean?: boolean; clientId?: string; login?: MqttCredentials } = {},
): Promise<MqttClient> {
  const { login } = options;
  return connectMqtt(url, options.clientId ?? unique(login?.username ?? 'tagtrail-test-reader'), {
    clean: options.clean ?? true,
    reconnectPeriod: 100,
    ...(login ? { username: login.username, password: login.password } : {}),
  });
}

/** One generic-json message: `reads` of [tag, antenna, time] (time null: none). */
export function genericJson(
  reads: Array<[tag: string, antenna: number | null, time: string | null]>,
): string {
  return JSON.stringify({
    reads: reads.map(([tag, antenna, time]) => ({
      tag,
      ...(antenna === null ? {} : { antenna }),
      ...(time === null ? {} : { time }),
    })),
  });
}

/** Drops a persistent session a test left on an external broker. */
export async function discardSession(url: string, clientId: string): Promise<void> {
  const client = await connectMqtt(url, clientId, { clean: true, reconnectPeriod: 0 });
  await client.endAsync();
}
