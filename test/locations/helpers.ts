import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { bearer, type TestApp, type TestOrg } from '../helpers/app.js';
import { expectErrorEnvelope, expectValidationError } from '../helpers/error-envelope.js';

export const BASE = '/api/v1/locations';

export interface LocationBody {
  id: number;
  external_key: string;
  name: string;
  description: string | null;
  is_active: boolean;
  parent_id: number | null;
  parent_external_key: string | null;
  tags: { id: number; tag_type: string; value: string }[];
  valid_from: string;
  valid_to: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** Requests as one organization's key, with the right content types. */
export interface Client {
  org: TestOrg;
  token: string;
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, body: unknown): Promise<LightMyRequestResponse>;
  patch(url: string, body: unknown): Promise<LightMyRequestResponse>;
  del(url: string): Promise<LightMyRequestResponse>;
  /** POST /api/v1/locations, expecting 201; returns `data`. */
  create(body: Record<string, unknown>): Promise<LocationBody>;
  /** GET /api/v1/locations/{id}, expecting 200; returns `data`. */
  fetch(id: number): Promise<LocationBody>;
  /** A list request, expecting 200; returns the envelope. */
  list(url: string): Promise<{ data: LocationBody[]; limit: number; offset: number; total_count: number }>;
}

const payload = (body: unknown) => (typeof body === 'string' ? body : JSON.stringify(body));

export async function client(t: TestApp, org?: TestOrg): Promise<Client> {
  const owner = org ?? (await t.createOrg());
  const { token } = await owner.key();
  const headers = bearer(token);
  const c: Client = {
    org: owner,
    token,
    get: (url) => t.app.inject({ method: 'GET', url, headers }),
    post: (url, body) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: payload(body),
      }),
    patch: (url, body) =>
      t.app.inject({
        method: 'PATCH',
        url,
        headers: { ...headers, 'content-type': 'application/merge-patch+json' },
        payload: payload(body),
      }),
    del: (url) => t.app.inject({ method: 'DELETE', url, headers }),
    async create(body) {
      const res = await c.post(BASE, body);
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data;
    },
    async fetch(id) {
      const res = await c.get(`${BASE}/${id}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    },
    async list(url) {
      const res = await c.get(url);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    },
  };
  return c;
}

/** The `fields[]` of a 400 validation_error, as [field, code] pairs. */
export function fieldCodes(res: LightMyRequestResponse): [string, string][] {
  return expectValidationError(res).map((f) => [f.field, f.code]);
}

export function expectConflict(res: LightMyRequestResponse, detail?: RegExp) {
  return expectErrorEnvelope(res, { status: 409, type: 'conflict', ...(detail ? { detail } : {}) });
}

export function expectNotFound(res: LightMyRequestResponse) {
  return expectErrorEnvelope(res, { status: 404, type: 'not_found' });
}

export const keysOf = (rows: { external_key: string }[]) => rows.map((r) => r.external_key);

/** Moves a location's window with SQL (bypassing the API's own checks on purpose). */
export async function setWindow(t: TestApp, id: number, from: string, to: string | null): Promise<void> {
  await t.database.db.pool.query('UPDATE locations SET valid_from = $2, valid_to = $3 WHERE id = $1', [
    id,
    from,
    to,
  ]);
}

/** A live asset placed directly at a location (asset placement is scan data: SQL only). */
export async function placeAsset(
  t: TestApp,
  orgId: number,
  locationId: number,
  key: string,
): Promise<number> {
  const { rows } = await t.database.db.pool.query<{ id: number }>(
    `WITH a AS (INSERT INTO assets (org_id, external_key, name) VALUES ($1, $2, $3) RETURNING id, org_id)
     INSERT INTO asset_positions (org_id, asset_id, location_id) SELECT org_id, id, $4 FROM a RETURNING asset_id AS id`,
    [orgId, key, key, locationId],
  );
  return rows[0]!.id;
}
