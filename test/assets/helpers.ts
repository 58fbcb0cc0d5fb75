import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { bearer, buildTestApp, type TestApp, type TestOrg } from '../helpers/app.js';
import { expectValidationError } from '../helpers/error-envelope.js';

/** Requests to the assets resource as one API key. */
export interface AssetApi {
  token: string;
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, body: unknown): Promise<LightMyRequestResponse>;
  patch(url: string, body: unknown): Promise<LightMyRequestResponse>;
  delete(url: string): Promise<LightMyRequestResponse>;
  /** POST /api/v1/assets, expecting 201; returns the asset. */
  create(body?: Record<string, unknown>): Promise<Asset>;
  /** GET /api/v1/assets{query}, expecting 200; returns the envelope. */
  list(query?: string): Promise<{ data: Asset[]; limit: number; offset: number; total_count: number }>;
}

let counter = 0;
/** A name and key no other asset in the run has. */
export const unique = (prefix = 'A') => `${prefix}-${process.pid}-${++counter}`;

export function assetApi(t: TestApp, token: string): AssetApi {
  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    t.app.inject({
      method,
      url,
      headers: {
        ...bearer(token),
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
        ...(method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {}),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const api: AssetApi = {
    token,
    get: (url) => inject('GET', url),
    post: (url, body) => inject('POST', url, body),
    patch: (url, body) => inject('PATCH', url, body),
    delete: (url) => inject('DELETE', url),
    async create(body = {}) {
      const res = await api.post('/api/v1/assets', { name: 'Pump', ...body });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data;
    },
    async list(query = '') {
      const res = await api.get(`/api/v1/assets${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    },
  };
  return api;
}

export interface AssetsFixture {
  t: TestApp;
  org: TestOrg;
  api: AssetApi;
}

/** A fresh server and database with one organization and a key holding every scope. */
export async function assetsFixture(): Promise<AssetsFixture> {
  const t = await buildTestApp();
  const org = await t.createOrg();
  const key = await org.key();
  return { t, org, api: assetApi(t, key.token) };
}

/**
 * A connection of its own to the fixture's database, outside the service's pools: it holds
 * the locks (keyspace, rows) that the service's requests are then seen to meet.
 */
export async function lockHolder(t: TestApp): Promise<pg.Client> {
  const holder = new pg.Client({ connectionString: t.database.url });
  await holder.connect();
  return holder;
}

/**
 * The describe block's assetsFixture and a lockHolder on its database: built before its
 * tests and closed after them (vitest hooks registered here), so its fields are read in
 * the tests, not when the block is declared.
 */
export function lockingAssetsFixture(): AssetsFixture & { holder: pg.Client } {
  const w = {} as AssetsFixture & { holder: pg.Client };
  beforeAll(async () => {
    Object.assign(w, await assetsFixture());
    w.holder = await lockHolder(w.t);
  });
  afterAll(async () => {
    await w.holder?.end();
    await w.t.close();
  });
  return w;
}

/** A location row, straight into the table (the locations API is another resource). */
export async function insertLocation(
  t: TestApp,
  orgId: number,
  externalKey: string,
  options: { validFrom?: string; validTo?: string; deleted?: boolean } = {},
): Promise<number> {
  const { rows } = await t.database.db.pool.query<{ id: number }>(
    `INSERT INTO locations (org_id, external_key, name, valid_from, valid_to, deleted_at)
     VALUES ($1, $2, $2, coalesce($3::timestamptz, now_ms() - interval '1 day'), $4::timestamptz,
             CASE WHEN $5 THEN now_ms() END)
     RETURNING id`,
    [orgId, externalKey, options.validFrom ?? null, options.validTo ?? null, options.deleted ?? false],
  );
  return rows[0]!.id;
}

/** Places an asset at a location, as the scan pipeline would. */
export async function placeAsset(t: TestApp, assetId: number, locationId: number): Promise<void> {
  await t.database.db.pool.query(
    `INSERT INTO asset_positions (org_id, asset_id, location_id, last_seen_at)
       SELECT org_id, id, $2, now() FROM assets WHERE id = $1
       ON CONFLICT (asset_id) DO UPDATE SET location_id = excluded.location_id, last_seen_at = excluded.last_seen_at`,
    [assetId, locationId],
  );
}

/** Sets columns the API does not let a client set directly (e.g. to make a row expired). */
export async function setColumns(t: TestApp, assetId: number, sql: string, values: unknown[] = []) {
  await t.database.db.pool.query(`UPDATE assets SET ${sql} WHERE id = $1`, [assetId, ...values]);
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** `[field, code]` of each entry of a validation_error response (its envelope checked). */
export function fieldCodes(res: LightMyRequestResponse): [string, string][] {
  return expectValidationError(res).map((f) => [f.field, f.code]);
}

/** Epoch milliseconds of a wire timestamp. */
export const ms = (wire: string) => Date.parse(wire);

/** A wire timestamp `days` from now (negative: in the past). */
export const daysFromNow = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
