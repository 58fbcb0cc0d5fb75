/**
 * Master data and scan history for the tracking tests, written straight to the database
 * (rows are inserted by the table owner, so row-level security does not apply), and
 * sightings stored through the ingest core exactly as an import file would store them.
 */
import type { LightMyRequestResponse } from 'fastify';
import { IngestService } from '../../src/ingest/service.js';
import { bearer, type TestApp, type TestOrg } from '../helpers/app.js';

export interface RowWindow {
  /** SQL expression for valid_from; default a day ago. */
  validFrom?: string;
  /** SQL expression for valid_to; default open-ended. */
  validTo?: string;
}

export interface Fixture {
  org: TestOrg;
  token: string;
  location(externalKey: string, window?: RowWindow): Promise<number>;
  asset(
    externalKey: string,
    options?: RowWindow & { name?: string; description?: string | null },
  ): Promise<number>;
  /** Stores sightings (`[assetId, locationId, RFC 3339 instant]`) in one import. */
  scan(...reads: [assetId: number, locationId: number, at: string][]): Promise<void>;
  get(url: string, token?: string): Promise<LightMyRequestResponse>;
}

export async function fixture(t: TestApp, name?: string): Promise<Fixture> {
  const org = await t.createOrg(name);
  const { token } = await org.key();
  const ingest = new IngestService(t.database.db);
  const pool = t.database.db.pool;
  const insert = async (table: 'locations' | 'assets', externalKey: string, o: RowWindow & object) => {
    const extra = table === 'assets' ? (o as { name?: string; description?: string | null }) : {};
    const { rows } = await pool.query<{ id: number }>(
      `INSERT INTO ${table} (org_id, external_key, name, description, valid_from, valid_to)
       VALUES ($1, $2, $3, $4, ${o.validFrom ?? "now() - interval '1 day'"}, ${o.validTo ?? 'NULL'})
       RETURNING id`,
      [org.id, externalKey, extra.name ?? `Name of ${externalKey}`, extra.description ?? null],
    );
    return rows[0]!.id;
  };
  return {
    org,
    token,
    location: (externalKey, window = {}) => insert('locations', externalKey, window),
    asset: (externalKey, options = {}) => insert('assets', externalKey, options),
    async scan(...reads) {
      const outcome = await ingest.records(
        org.id,
        reads.map(([assetId, locationId, at]) => ({
          observedAt: Date.parse(at),
          asset: { id: assetId },
          location: { id: locationId },
        })),
        'import',
        JSON.stringify(reads),
      );
      if (outcome.good !== reads.length) throw new Error(`scan stored ${JSON.stringify(outcome)}`);
    },
    get: (url, tokenOverride) =>
      t.app.inject({ method: 'GET', url, headers: bearer(tokenOverride ?? token) }),
  };
}

/** A query string from pairs; repeated names repeat the parameter. */
export function qs(pairs: [string, string | number | boolean][]): string {
  const params = new URLSearchParams();
  for (const [k, v] of pairs) params.append(k, String(v));
  const text = params.toString();
  return text ? `?${text}` : '';
}
