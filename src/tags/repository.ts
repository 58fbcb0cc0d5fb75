import type { Tx } from '../db/pool.js';
import { preparedQuery } from '../db/prepared.js';
import { textPer } from '../db/statement-text.js';

export type OwnerKind = 'asset' | 'location';

export interface Owner {
  kind: OwnerKind;
  id: number;
}

export interface Tag {
  id: number;
  tag_type: string;
  value: string;
}

const OWNER_COLUMN: Record<OwnerKind, 'asset_id' | 'location_id'> = {
  asset: 'asset_id',
  location: 'location_id',
};
const OWNER_TABLE: Record<OwnerKind, 'assets' | 'locations'> = { asset: 'assets', location: 'locations' };

/**
 * Up to a page of owners (the API's largest, 200) the statement is named: its kept plan
 * walks the owner index once per id. A larger set (an import's batch of 5,000) is planned
 * for its own array, which may filter a scan through a hash of the ids: a kept plan made
 * while the table was small (say, before an import's first rows) compares each tag with
 * every id, and an import of 20,000 assets spent 6.8 s in this statement that way.
 */
export const NAMED_OWNERS_MAX = 200;

/** Attached tags of several owners at once, each list ordered by tag id. */
export async function tagsForOwners(
  tx: Tx,
  orgId: number,
  kind: OwnerKind,
  ids: number[],
): Promise<Map<number, Tag[]>> {
  const byOwner = new Map<number, Tag[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byOwner;
  const { rows } = await tx.query<Tag & { owner_id: number }>(ownersTagsQuery(orgId, kind, ids));
  for (const { owner_id, ...tag } of rows) byOwner.get(owner_id)?.push(tag);
  return byOwner;
}

/**
 * One owner's tags as a named statement, by equality: with `= ANY($2)` PostgreSQL planned
 * every read of a single asset anew (the generic plan guesses ten ids, so a custom plan for
 * one always looked cheaper): 120 us of planning for 10 us of work, the largest cost of
 * GET /assets/{id}. Also for Database.readNamed.
 */
export function ownerTagsRead(orgId: number, kind: OwnerKind, id: number) {
  return preparedQuery(tagsOfOwner(kind), [orgId, id]);
}

/** The live tags whose owner `column` matches `$2` by `match`, with the owner as owner_id. */
const liveTagsOf = (column: string, match: string) =>
  `SELECT id, tag_type, value, ${column} AS owner_id FROM tags WHERE org_id = $1 AND ${column} ${match} AND detached_at IS NULL ORDER BY id`;
const tagsOfOwner = textPer((kind: OwnerKind) => liveTagsOf(OWNER_COLUMN[kind], '= $2'));
const tagsOfOwners = textPer((kind: OwnerKind) => liveTagsOf(OWNER_COLUMN[kind], '= ANY($2::bigint[])'));

/** Tags of the rows of `ownerTagsRead`, without their owner column. */
export const tagsOfRows = (rows: Array<Tag & { owner_id: number }>): Tag[] =>
  rows.map(({ owner_id: _, ...tag }) => tag);

function ownersTagsQuery(orgId: number, kind: OwnerKind, ids: number[]) {
  if (ids.length === 1) return ownerTagsRead(orgId, kind, ids[0]!);
  const text = tagsOfOwners(kind);
  return ids.length <= NAMED_OWNERS_MAX ? preparedQuery(text, [orgId, ids]) : { text, values: [orgId, ids] };
}

/** Inserts tags for an owner; a live duplicate (tag_type, value) raises 23505 on tags_value_live. */
export async function insertTags(
  tx: Tx,
  orgId: number,
  owner: Owner,
  tags: { tag_type: string; value: string }[],
): Promise<Tag[]> {
  if (tags.length === 0) return [];
  const { rows } = await tx.query<Tag>(
    `INSERT INTO tags (org_id, ${OWNER_COLUMN[owner.kind]}, tag_type, value)
     SELECT $1, $2, t.tag_type, t.value FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(tag_type, value, n)
     ORDER BY t.n
     RETURNING id, tag_type, value`,
    [orgId, owner.id, tags.map((t) => t.tag_type), tags.map((t) => t.value)],
  );
  return rows;
}

/**
 * The live tag that is (tag_type, value) in the organization, with its owner: the same
 * spelling, or for RFID and BLE the same match key (migration 0064), as ingest would take
 * a read of either for the other.
 */
export async function findTagByValue(
  tx: Tx,
  orgId: number,
  tagType: string,
  value: string,
): Promise<(Tag & { asset_id: number | null; location_id: number | null }) | null> {
  const { rows } = await tx.query(
    `SELECT id, tag_type, value, asset_id, location_id FROM tags
     WHERE org_id = $1 AND match_key = tag_match_key($2, $3) AND tag_type = $2 AND detached_at IS NULL
     ORDER BY value = $3 DESC, id LIMIT 1`,
    [orgId, tagType, value],
  );
  return rows[0] ?? null;
}

/** Detaches one tag of this owner; false when it is not attached to it. */
export async function detachTag(tx: Tx, orgId: number, owner: Owner, tagId: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE tags SET detached_at = now_ms()
     WHERE org_id = $1 AND id = $2 AND ${OWNER_COLUMN[owner.kind]} = $3 AND detached_at IS NULL`,
    [orgId, tagId, owner.id],
  );
  return rowCount === 1;
}

/** Releases every tag of an owner being deleted, so the tags can be reused at once. */
export async function detachAllTags(tx: Tx, orgId: number, owner: Owner): Promise<void> {
  await tx.query(
    `UPDATE tags SET detached_at = now_ms()
     WHERE org_id = $1 AND ${OWNER_COLUMN[owner.kind]} = $2 AND detached_at IS NULL`,
    [orgId, owner.id],
  );
}

/**
 * Recomputes the owner's searchable tag values (what `q` matches) and, when asked,
 * advances its updated_at: a tag change is a change of the record's representation.
 */
export async function refreshTagValues(tx: Tx, orgId: number, owner: Owner, touch: boolean): Promise<void> {
  const table = OWNER_TABLE[owner.kind];
  await tx.query(
    `UPDATE ${table} o SET tag_values = coalesce((
        SELECT string_agg(t.value, chr(1) ORDER BY t.id) FROM tags t
        WHERE t.org_id = $1 AND t.${OWNER_COLUMN[owner.kind]} = o.id AND t.detached_at IS NULL), '')
        ${touch ? ", updated_at = greatest(now_ms(), o.updated_at + interval '1 millisecond')" : ''}
     WHERE o.org_id = $1 AND o.id = $2`,
    [orgId, owner.id],
  );
}
