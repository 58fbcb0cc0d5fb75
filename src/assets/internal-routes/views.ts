import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Tx } from '../../db/pool.js';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import { DataEnvelope, Id, ListEnvelope, Nullable, TimestampOut } from '../../http/schemas/common.js';
import { PageOnlyQuery, SearchPageQuery } from '../../http/schemas/internal.js';
import { toWireOrNull } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { containsCondition, containsPattern, listEnvelope } from '../../master-data/list-query.js';
import { AssetWhereaboutsSchema, assetWhereabouts, currentStayStart, locationNames } from './detail.js';

export const AssetRowSchema = Type.Object({
  id: Type.Integer(),
  external_key: Type.String(),
  name: Type.String(),
  location_id: Nullable(Type.Integer()),
  location_external_key: Nullable(Type.String()),
  location_name: Nullable(Type.String()),
  last_seen_at: Nullable(TimestampOut()),
});

interface AssetRowRecord {
  id: number;
  external_key: string;
  name: string;
  location_id: number | null;
  location_external_key: string | null;
  location_name: string | null;
  last_seen_at: Date | null;
}

/** The assets list's orders (`sort`, `-` for descending); id breaks ties, assets never seen come last. */
const ASSET_SORTS = {
  name: 'a.name ASC, a.id ASC',
  '-name': 'a.name DESC, a.id ASC',
  external_key: 'a.external_key ASC, a.id ASC',
  '-external_key': 'a.external_key DESC, a.id ASC',
  location: 'l.name ASC NULLS LAST, a.name ASC, a.id ASC',
  '-location': 'l.name DESC NULLS LAST, a.name ASC, a.id ASC',
  last_seen_at: 'p.last_seen_at ASC NULLS LAST, a.id ASC',
  '-last_seen_at': 'p.last_seen_at DESC NULLS LAST, a.id ASC',
} as const;
export type AssetSort = keyof typeof ASSET_SORTS;

const AssetListQuery = Type.Object(
  {
    ...SearchPageQuery.properties,
    sort: Type.Optional(
      Type.Unsafe<AssetSort>({
        type: 'string',
        enum: Object.keys(ASSET_SORTS),
        description: 'name (default), external_key, location or last_seen_at; prefix - for descending',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Live assets (matching `q` over key, name, description and tags) with where they are now. */
async function assetPage(
  tx: Tx,
  orgId: number,
  q: string | undefined,
  page: { limit: number; offset: number },
  sort: AssetSort = 'name',
) {
  const args: unknown[] = [orgId];
  const param = (value: unknown) => `$${args.push(value)}`;
  const search = q ? ` AND ${containsCondition('a.search_text', containsPattern(q), param)}` : '';
  const where = `a.org_id = $1 AND a.deleted_at IS NULL${search}`;
  const n = args.length;
  const [rows, count] = await Promise.all([
    tx.query<AssetRowRecord>(
      `SELECT a.id, a.external_key, a.name, p.location_id, l.external_key AS location_external_key,
         l.name AS location_name, p.last_seen_at
       FROM assets a LEFT JOIN asset_positions p ON p.org_id = a.org_id AND p.asset_id = a.id
       LEFT JOIN locations l ON l.id = p.location_id AND l.org_id = a.org_id
       WHERE ${where} ORDER BY ${ASSET_SORTS[sort]} LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...args, page.limit, page.offset],
    ),
    tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM assets a WHERE ${where}`, args),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

const AssetParams = Type.Object({ asset_id: Id() });

/**
 * A history row of the public API, with the location's name and whether the stay is the
 * current one (its duration then runs to the last sighting so far, not to a departure).
 */
export const InternalHistoryRowSchema = Type.Object({
  event_observed_at: TimestampOut(),
  location_id: Nullable(Type.Integer()),
  location_external_key: Nullable(Type.String()),
  location_name: Nullable(Type.String()),
  duration_seconds: Type.Number(),
  current: Type.Boolean(),
});

/** Where every asset is now, one asset with its whereabouts, and its history (the tracking service's). */
export const assetViewRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/assets',
      {
        config: { role: 'viewer' },
        schema: { querystring: AssetListQuery, response: { 200: ListEnvelope(AssetRowSchema) } },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const { q, limit, offset, sort } = request.query;
        const page = { limit, offset };
        const { rows, total } = await s.db.readWithOrg(orgId, (tx) => assetPage(tx, orgId, q, page, sort));
        return listEnvelope(
          rows.map((r) => ({ ...r, last_seen_at: toWireOrNull(r.last_seen_at) })),
          page,
          total,
        );
      },
    );

    app.get(
      '/internal/assets/:asset_id',
      {
        config: { role: 'viewer' },
        schema: {
          params: AssetParams,
          response: { 200: DataEnvelope(Type.Intersect([Type.Ref('Asset'), AssetWhereaboutsSchema])) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const { asset_id } = request.params;
        // The public read first: it is the 404 for a missing, deleted or foreign asset.
        const asset = await s.assets.get(orgId, asset_id);
        const where = await s.db.readWithOrg(orgId, (tx) => assetWhereabouts(tx, orgId, asset_id));
        return { data: { ...asset, ...where } };
      },
    );

    app.get(
      '/internal/assets/:asset_id/history',
      {
        config: { role: 'viewer' },
        schema: {
          params: AssetParams,
          querystring: PageOnlyQuery,
          response: { 200: ListEnvelope(InternalHistoryRowSchema) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const { asset_id } = request.params;
        const { limit, offset } = request.query;
        const history = await s.tracking.history(orgId, asset_id, { limit, offset });
        const ids = history.data.flatMap((r) => (r.location_id === null ? [] : [r.location_id]));
        const [names, current] = await s.db.readWithOrg(orgId, (tx) =>
          Promise.all([locationNames(tx, orgId, ids), currentStayStart(tx, orgId, asset_id)]),
        );
        return {
          ...history,
          data: history.data.map((r) => ({
            ...r,
            location_name: r.location_id === null ? null : (names.get(r.location_id) ?? null),
            current: r.event_observed_at === current,
          })),
        };
      },
    );
  };
