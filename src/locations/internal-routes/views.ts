import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Tx } from '../../db/pool.js';
import { notFound } from '../../errors.js';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import { Id, ListEnvelope, Nullable, PageQuery, TimestampOut } from '../../http/schemas/common.js';
import { PageOnlyQuery, SearchPageQuery, SearchQ } from '../../http/schemas/internal.js';
import { toWireOrNull } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { containsCondition, containsPattern, listEnvelope, pageOf } from '../../master-data/list-query.js';
import { liveLocationExists } from '../repository.js';

export const TreeNodeSchema = Type.Object({
  id: Type.Integer(),
  external_key: Type.String(),
  name: Type.String(),
  child_count: Type.Integer({ description: 'Live child locations' }),
  asset_count: Type.Integer({
    description: 'Live assets currently at this location, descendants not counted',
  }),
});

/** A search hit in the tree: a node anywhere, with the names of its ancestors. */
export const TreeHitSchema = Type.Object({
  ...TreeNodeSchema.properties,
  path: Type.Array(Type.String(), { description: 'Names of its ancestors, root first' }),
});

export const LocationOptionSchema = Type.Object({
  id: Type.Integer(),
  external_key: Type.String(),
  name: Type.String(),
  path: Type.Array(Type.String(), {
    description: 'Names of its ancestors, root first, so same-named rooms in different buildings differ',
  }),
  path_ids: Type.Array(Type.Integer(), {
    description: 'Ids of its ancestors, root first, so a Move picker can leave out a subtree',
  }),
});

type Page = { limit: number; offset: number };

const TreeQuery = Type.Object(
  { ...PageQuery, parent_id: Type.Optional(Id()) },
  { additionalProperties: false },
);

const SearchTreeQuery = Type.Object({ ...PageQuery, q: SearchQ }, { additionalProperties: false });

const NODE_COUNTS = `(SELECT count(*) FROM locations c
    WHERE c.org_id = l.org_id AND c.parent_id = l.id AND c.deleted_at IS NULL)::int AS child_count,
  (SELECT count(*) FROM asset_positions p JOIN assets a ON a.org_id = p.org_id AND a.id = p.asset_id
    WHERE p.org_id = l.org_id AND p.location_id = l.id AND a.deleted_at IS NULL)::int AS asset_count`;

/**
 * The ancestors of a hit `h` (with its `parent_id`; `$1` the organization), root first:
 * `agg` of `name` gives `path`, of `id` gives `path_ids`. `seen` stops the walk at a cycle.
 */
const ancestors = (
  column: 'name' | 'id',
  empty: string,
  as: string,
) => `COALESCE((WITH RECURSIVE up (id, name, parent_id, depth, seen) AS (
    SELECT p.id, p.name, p.parent_id, 1, ARRAY[h.id, p.id] FROM locations p
    WHERE p.org_id = $1 AND p.id = h.parent_id
    UNION ALL
    SELECT a.id, a.name, a.parent_id, u.depth + 1, u.seen || a.id
    FROM up u JOIN locations a ON a.org_id = $1 AND a.id = u.parent_id
    WHERE NOT a.id = ANY(u.seen)
  ) SELECT array_agg(${column} ORDER BY depth DESC) FROM up), ${empty}) AS ${as}`;

const ANCESTOR_NAMES = ancestors('name', "'{}'", 'path');
/** Ids as well as names: the Move picker marks the moved location's own subtree with them. */
const ANCESTOR_IDS = ancestors('id', "'{}'::int[]", 'path_ids');

/** One level of the location tree: the live children of `parentId`, or the roots. */
async function treeLevel(tx: Tx, orgId: number, parentId: number | undefined, page: Page) {
  if (parentId !== undefined && !(await liveLocationExists(tx, orgId, parentId))) throw notFound('location');
  const where = `l.org_id = $1 AND l.deleted_at IS NULL AND ${parentId === undefined ? 'l.parent_id IS NULL' : 'l.parent_id = $2'}`;
  const args: unknown[] = parentId === undefined ? [orgId] : [orgId, parentId];
  const n = args.length;
  const [rows, count] = await Promise.all([
    tx.query<{ id: number; external_key: string; name: string; child_count: number; asset_count: number }>(
      `SELECT l.id, l.external_key, l.name, ${NODE_COUNTS}
       FROM locations l WHERE ${where}
       ORDER BY l.name, l.id LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...args, page.limit, page.offset],
    ),
    tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM locations l WHERE ${where}`, args),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

/**
 * Live locations at any depth whose name or external key contains `q`, by name, each
 * with its ancestors' names. The trigram index on search_text (which holds both) narrows
 * the rows first; the path is walked for the page's rows only. The name is lower-cased as
 * search_text is (ICU): in its own collation ("C") lower() leaves all but ASCII as it is.
 */
async function treeSearch(tx: Tx, orgId: number, q: string, page: Page) {
  const args: unknown[] = [orgId];
  const param = (value: unknown) => `$${args.push(value)}`;
  const pattern = containsPattern(q);
  const where = `l.org_id = $1 AND l.deleted_at IS NULL AND ${containsCondition('l.search_text', pattern, param)}
    AND (${containsCondition('lower(l.name COLLATE "und-x-icu")', pattern, param, 'und-x-icu')}
      OR ${containsCondition('lower(l.external_key)', pattern, param)})`;
  const n = args.length;
  const [rows, count] = await Promise.all([
    tx.query<TreeHitRow>(
      `WITH hits AS (
         SELECT l.id, l.external_key, l.name, l.parent_id, ${NODE_COUNTS}
         FROM locations l WHERE ${where} ORDER BY l.name, l.id LIMIT $${n + 1} OFFSET $${n + 2}
       )
       SELECT h.id, h.external_key, h.name, h.child_count, h.asset_count, ${ANCESTOR_NAMES}
       FROM hits h ORDER BY h.name, h.id`,
      [...args, page.limit, page.offset],
    ),
    tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM locations l WHERE ${where}`, args),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

interface TreeHitRow {
  id: number;
  external_key: string;
  name: string;
  child_count: number;
  asset_count: number;
  path: string[];
}

/** Live assets placed at one live location now, by name. */
async function assetsAt(tx: Tx, orgId: number, locationId: number, page: Page) {
  if (!(await liveLocationExists(tx, orgId, locationId))) throw notFound('location');
  const placed = `asset_positions p JOIN assets a ON a.org_id = p.org_id AND a.id = p.asset_id
    WHERE p.org_id = $1 AND p.location_id = $2 AND a.deleted_at IS NULL`;
  const [rows, count] = await Promise.all([
    tx.query<{ id: number; external_key: string; name: string; last_seen_at: Date | null }>(
      `SELECT a.id, a.external_key, a.name, p.last_seen_at FROM ${placed}
       ORDER BY a.name, a.id LIMIT $3 OFFSET $4`,
      [orgId, locationId, page.limit, page.offset],
    ),
    tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${placed}`, [orgId, locationId]),
  ]);
  return {
    rows: rows.rows.map((r) => ({ ...r, last_seen_at: toWireOrNull(r.last_seen_at) })),
    total: count.rows[0]!.n,
  };
}

const AssetHereSchema = Type.Object({
  id: Type.Integer(),
  external_key: Type.String(),
  name: Type.String(),
  last_seen_at: Nullable(TimestampOut()),
});

/** Live locations whose searchable text (key, name, description, tags) contains `q`. */
async function pickerPage(tx: Tx, orgId: number, q: string | undefined, page: Page) {
  const args: unknown[] = [orgId];
  const param = (value: unknown) => `$${args.push(value)}`;
  const search = q ? ` AND ${containsCondition('search_text', containsPattern(q), param)}` : '';
  const where = `org_id = $1 AND deleted_at IS NULL${search}`;
  const n = args.length;
  const [rows, count] = await Promise.all([
    tx.query<{ id: number; external_key: string; name: string; path: string[]; path_ids: number[] }>(
      `WITH hits AS (
         SELECT id, external_key, name, parent_id FROM locations WHERE ${where}
         ORDER BY name, id LIMIT $${n + 1} OFFSET $${n + 2}
       )
       SELECT h.id, h.external_key, h.name, ${ANCESTOR_NAMES}, ${ANCESTOR_IDS}
       FROM hits h ORDER BY h.name, h.id`,
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
    /** A page of a list read for the session's organization in one read transaction. */
    const listPage = async <T>(
      request: FastifyRequest,
      query: Page,
      read: (tx: Tx, orgId: number, page: Page) => Promise<{ rows: T[]; total: number }>,
    ) => {
      const { orgId } = sessionOf(request);
      const page = pageOf(query);
      const { rows, total } = await s.db.readWithOrg(orgId, (tx) => read(tx, orgId, page));
      return listEnvelope(rows, page, total);
    };

    app.get(
      '/internal/locations/tree',
      {
        config: { role: 'viewer' },
        schema: { querystring: TreeQuery, response: { 200: ListEnvelope(TreeNodeSchema) } },
      },
      (request) =>
        listPage(request, request.query, (tx, orgId, page) =>
          treeLevel(tx, orgId, request.query.parent_id, page),
        ),
    );

    app.get(
      '/internal/locations/tree/search',
      {
        config: { role: 'viewer' },
        schema: { querystring: SearchTreeQuery, response: { 200: ListEnvelope(TreeHitSchema) } },
      },
      (request) =>
        listPage(request, request.query, (tx, orgId, page) => treeSearch(tx, orgId, request.query.q, page)),
    );

    app.get(
      '/internal/locations/:location_id/assets',
      {
        config: { role: 'viewer' },
        schema: {
          params: Type.Object({ location_id: Id() }, { additionalProperties: false }),
          querystring: PageOnlyQuery,
          response: { 200: ListEnvelope(AssetHereSchema) },
        },
      },
      (request) =>
        listPage(request, request.query, (tx, orgId, page) =>
          assetsAt(tx, orgId, request.params.location_id, page),
        ),
    );

    app.get(
      '/internal/locations',
      {
        config: { role: 'viewer' },
        schema: { querystring: SearchPageQuery, response: { 200: ListEnvelope(LocationOptionSchema) } },
      },
      (request) =>
        listPage(request, request.query, (tx, orgId, page) => pickerPage(tx, orgId, request.query.q, page)),
    );
  };
