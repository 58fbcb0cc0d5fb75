import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Tx } from '../../db/pool.js';
import { notFound } from '../../errors.js';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import { Id, ListEnvelope, PageQuery } from '../../http/schemas/common.js';
import { SearchPageQuery } from '../../http/schemas/internal.js';
import type { InternalServices } from '../../internal-services.js';
import { containsPattern, listEnvelope } from '../../master-data/list-query.js';

export const TreeNodeSchema = Type.Object({
  id: Type.Integer(),
  external_key: Type.String(),
  name: Type.String(),
  child_count: Type.Integer({ description: 'Live child locations' }),
  asset_count: Type.Integer({
    description: 'Live assets currently at this location, descendants not counted',
  }),
});

export const LocationOptionSchema = Type.Object({
  id: Type.Integer(),
  external_key: Type.String(),
  name: Type.String(),
});

type Page = { limit: number; offset: number };

const TreeQuery = Type.Object(
  { ...PageQuery, parent_id: Type.Optional(Id()) },
  { additionalProperties: false },
);

/** One level of the location tree: the live children of `parentId`, or the roots. */
async function treeLevel(tx: Tx, orgId: number, parentId: number | undefined, page: Page) {
  if (parentId !== undefined) {
    const parent = await tx.query(
      'SELECT 1 FROM locations WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL',
      [orgId, parentId],
    );
    if (!parent.rowCount) throw notFound('location');
  }
  const where = `l.org_id = $1 AND l.deleted_at IS NULL AND ${parentId === undefined ? 'l.parent_id IS NULL' : 'l.parent_id = $2'}`;
  const args: unknown[] = parentId === undefined ? [orgId] : [orgId, parentId];
  const n = args.length;
  const [rows, count] = await Promise.all([
    tx.query<{ id: number; external_key: string; name: string; child_count: number; asset_count: number }>(
      `SELECT l.id, l.external_key, l.name,
         (SELECT count(*) FROM locations c
          WHERE c.org_id = l.org_id AND c.parent_id = l.id AND c.deleted_at IS NULL)::int AS child_count,
         (SELECT count(*) FROM assets a
          WHERE a.org_id = l.org_id AND a.location_id = l.id AND a.deleted_at IS NULL)::int AS asset_count
       FROM locations l WHERE ${where}
       ORDER BY l.name, l.id LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...args, page.limit, page.offset],
    ),
    tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM locations l WHERE ${where}`, args),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

/** Live locations whose searchable text (key, name, description, tags) contains `q`. */
async function pickerPage(tx: Tx, orgId: number, q: string | undefined, page: Page) {
  const where = `org_id = $1 AND deleted_at IS NULL${q ? ` AND search_text LIKE $2` : ''}`;
  const args: unknown[] = q ? [orgId, containsPattern(q)] : [orgId];
  const n = args.length;
  const [rows, count] = await Promise.all([
    tx.query<{ id: number; external_key: string; name: string }>(
      `SELECT id, external_key, name FROM locations WHERE ${where}
       ORDER BY name, id LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...args, page.limit, page.offset],
    ),
    tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM locations WHERE ${where}`, args),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

/** The location tree, a level at a time, and the locations picker. */
export const locationViewRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/locations/tree',
      { schema: { querystring: TreeQuery, response: { 200: ListEnvelope(TreeNodeSchema) } } },
      async (request) => {
        const { orgId } = sessionOf(request);
        const { parent_id, limit, offset } = request.query;
        const page = { limit, offset };
        const { rows, total } = await s.db.withOrg(orgId, (tx) => treeLevel(tx, orgId, parent_id, page));
        return listEnvelope(rows, page, total);
      },
    );

    app.get(
      '/internal/locations',
      { schema: { querystring: SearchPageQuery, response: { 200: ListEnvelope(LocationOptionSchema) } } },
      async (request) => {
        const { orgId } = sessionOf(request);
        const { q, limit, offset } = request.query;
        const page = { limit, offset };
        const { rows, total } = await s.db.withOrg(orgId, (tx) => pickerPage(tx, orgId, q, page));
        return listEnvelope(rows, page, total);
      },
    );
  };
