import type { Caller } from '../caller.js';
import type { Database, Tx } from '../db/pool.js';
import { ApiError, conflict, notFound } from '../errors.js';
import { recordEvents } from '../events/outbox.js';
import { matchKey, type TagType } from '../tracking/resolve.js';
import {
  detachTag,
  findTagByValue,
  insertTags,
  type Owner,
  refreshTagValues,
  type Tag,
} from './repository.js';

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505';

/** What makes two tags one: the type and, for RFID and BLE, the match key (migration 0064). */
const tagIdentity = (t: { tag_type: string; value: string }) =>
  `${t.tag_type}\u0000${matchKey(t.tag_type as TagType, t.value)}`;

/** Attaches tags inside the caller's transaction; a duplicate pair is 409 `conflict`. */
export async function attachTags(
  tx: Tx,
  orgId: number,
  owner: Owner,
  tags: { tag_type: string; value: string }[],
): Promise<Tag[]> {
  const seen = new Map<string, string>();
  for (const t of tags) {
    const key = tagIdentity(t);
    const earlier = seen.get(key);
    if (earlier === t.value)
      throw conflict(`tag ${t.tag_type}:${t.value} appears more than once in the request`);
    if (earlier !== undefined)
      throw conflict(
        `tag ${t.tag_type}:${t.value} is the same tag as ${t.tag_type}:${earlier} in the request`,
      );
    seen.set(key, t.value);
  }
  for (const t of tags) {
    const holder = await findTagByValue(tx, orgId, t.tag_type, t.value);
    if (holder) {
      const where = holder.asset_id !== null ? `asset ${holder.asset_id}` : `location ${holder.location_id}`;
      const as = holder.value === t.value ? '' : ` as ${holder.tag_type}:${holder.value}`;
      throw conflict(`tag ${t.tag_type}:${t.value} is already attached to ${where}${as}`);
    }
  }
  try {
    const inserted = await insertTags(tx, orgId, owner, tags);
    await refreshTagValues(tx, orgId, owner, false);
    return inserted;
  } catch (err) {
    // Lost a race with a concurrent attach of the same pair.
    if (isUniqueViolation(err)) throw conflict('one of the tags is already attached elsewhere');
    throw err;
  }
}

const OWNER_TABLE = { asset: 'assets', location: 'locations' } as const;

/** tag.attached / tag.detached: the tag resource and its owner, in the write's transaction. */
const tagEvent = (tx: Tx, orgId: number, type: 'tag.attached' | 'tag.detached', owner: Owner, tag: Tag) =>
  recordEvents(tx, orgId, [
    {
      type,
      subject: `tag:${tag.id}`,
      locationIds: owner.kind === 'location' ? [owner.id] : [],
      payload: { ...tag, owner_type: owner.kind, owner_id: owner.id },
    },
  ]);

export class TagService {
  constructor(private readonly db: Database) {}

  private async lockLiveOwner(tx: Tx, orgId: number, owner: Owner): Promise<void> {
    const { rowCount } = await tx.query(
      `SELECT 1 FROM ${OWNER_TABLE[owner.kind]} WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE`,
      [orgId, owner.id],
    );
    if (!rowCount) throw notFound(owner.kind);
  }

  async attach(caller: Caller, owner: Owner, tag: { tag_type: string; value: string }): Promise<Tag> {
    const orgId = caller.orgId;
    return this.db.withOrg(caller, async (tx) => {
      await this.lockLiveOwner(tx, orgId, owner);
      const [created] = await attachTags(tx, orgId, owner, [tag]);
      await refreshTagValues(tx, orgId, owner, true);
      if (!created) throw new ApiError('internal_error', 'tag was not stored');
      await tagEvent(tx, orgId, 'tag.attached', owner, created);
      return created;
    });
  }

  /** 404 when repeated, when the tag is not this owner's, or another organization's. */
  async detach(caller: Caller, owner: Owner, tagId: number): Promise<void> {
    const orgId = caller.orgId;
    await this.db.withOrg(caller, async (tx) => {
      await this.lockLiveOwner(tx, orgId, owner);
      const { rows } = await tx.query<Tag>(
        `SELECT id, tag_type, value FROM tags WHERE org_id = $1 AND id = $2 AND detached_at IS NULL`,
        [orgId, tagId],
      );
      if (!rows[0] || !(await detachTag(tx, orgId, owner, tagId))) throw notFound('tag');
      await tagEvent(tx, orgId, 'tag.detached', owner, rows[0]);
      await refreshTagValues(tx, orgId, owner, true);
    });
  }
}
