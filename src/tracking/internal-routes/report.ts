import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Tx } from '../../db/pool.js';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import { ListEnvelope, Nullable, TimestampOut } from '../../http/schemas/common.js';
import { SearchPageQuery } from '../../http/schemas/internal.js';
import type { InternalServices } from '../../internal-services.js';

/** A report row of the public API, with the asset's and the location's names for people. */
const InternalReportRow = Type.Object({
  asset_id: Type.Integer(),
  asset_external_key: Type.String(),
  asset_name: Nullable(Type.String()),
  asset_last_seen: TimestampOut(),
  asset_deleted_at: Nullable(TimestampOut()),
  location_id: Nullable(Type.Integer()),
  location_external_key: Nullable(Type.String()),
  location_name: Nullable(Type.String()),
});

async function namesOf(tx: Tx, table: 'assets' | 'locations', orgId: number, ids: number[]) {
  if (ids.length === 0) return new Map<number, string>();
  const { rows } = await tx.query<{ id: number; name: string }>(
    `SELECT id, name FROM ${table} WHERE org_id = $1 AND id = ANY($2::bigint[])`,
    [orgId, [...new Set(ids)]],
  );
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** The asset-location report, as the public API serves it, with `q` and names. */
export const reportRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/report',
      {
        config: { role: 'viewer' },
        schema: { querystring: SearchPageQuery, response: { 200: ListEnvelope(InternalReportRow) } },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const { q, limit, offset } = request.query;
        const report = await s.tracking.report(orgId, { limit, offset, q });
        const locationIds = report.data.flatMap((r) => (r.location_id === null ? [] : [r.location_id]));
        const [assets, locations] = await s.db.readWithOrg(orgId, (tx) =>
          Promise.all([
            namesOf(
              tx,
              'assets',
              orgId,
              report.data.map((r) => r.asset_id),
            ),
            namesOf(tx, 'locations', orgId, locationIds),
          ]),
        );
        return {
          ...report,
          data: report.data.map((r) => ({
            ...r,
            asset_name: assets.get(r.asset_id) ?? null,
            location_name: r.location_id === null ? null : (locations.get(r.location_id) ?? null),
          })),
        };
      },
    );
  };
