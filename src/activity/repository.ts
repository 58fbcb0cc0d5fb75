import type { Tx } from '../db/pool.js';

/** What an activity entry's subject can be; the triggers of migration 0035 name them. */
export const ENTITY_TYPES = [
  'asset',
  'location',
  'tag',
  'api_key',
  'reader',
  'scan_point',
  'user',
  'invitation',
  'password_reset',
  'organization',
  // A person's two-factor sign-in (migration 0046): its record is the user.
  'two_factor',
] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

export const ACTOR_TYPES = ['user', 'api_key', 'cli', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

export interface ActivityEntry {
  id: number;
  occurred_at: Date;
  actor_type: ActorType;
  actor_id: string | null;
  actor_name: string | null;
  entity_type: string;
  entity_id: string;
  action: 'created' | 'updated' | 'deleted';
  record_type: string;
  record_id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export interface ActivityFilter {
  entityType?: EntityType;
  /** The entries shown on a record's page: its own, and those of its tags or scan points. */
  record?: { type: EntityType; id: string };
  actor?: { type: ActorType; id?: string };
  since?: Date;
  until?: Date;
}

export const COLUMNS = `id, occurred_at, actor_type, actor_id, actor_name, entity_type, entity_id, action,
  record_type, record_id, before, after`;

/** The WHERE clause of a filter, its parameters after the organization's ($1). */
export function filterSql(orgId: number, filter: ActivityFilter): { where: string; params: unknown[] } {
  const params: unknown[] = [orgId];
  const conds = ['org_id = $1'];
  const add = (sql: (n: string) => string, value: unknown) => {
    params.push(value);
    conds.push(sql(`$${params.length}`));
  };
  if (filter.entityType) add((p) => `entity_type = ${p}`, filter.entityType);
  if (filter.record) {
    add((p) => `record_type = ${p}`, filter.record.type);
    add((p) => `record_id = ${p}`, filter.record.id);
  }
  if (filter.actor) {
    add((p) => `actor_type = ${p}`, filter.actor.type);
    if (filter.actor.id !== undefined) add((p) => `actor_id = ${p}`, filter.actor.id);
  }
  if (filter.since) add((p) => `occurred_at >= ${p}`, filter.since);
  if (filter.until) add((p) => `occurred_at < ${p}`, filter.until);
  return { where: conds.join(' AND '), params };
}

/** Newest first. */
export async function listActivity(
  tx: Tx,
  orgId: number,
  filter: ActivityFilter,
  page: { limit: number; offset: number },
): Promise<{ rows: ActivityEntry[]; total: number }> {
  const { where, params } = filterSql(orgId, filter);
  const n = params.length;
  const [list, count] = await Promise.all([
    tx.query<ActivityEntry>(
      `SELECT ${COLUMNS} FROM activity WHERE ${where} ORDER BY occurred_at DESC, id DESC LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...params, page.limit, page.offset],
    ),
    tx.query<{ total: number }>(`SELECT count(*)::int AS total FROM activity WHERE ${where}`, params),
  ]);
  return { rows: list.rows, total: count.rows[0]?.total ?? 0 };
}

/** The people and keys that appear in the organization's log, for the actor filter's choices. */
export async function listActors(
  tx: Tx,
  orgId: number,
): Promise<{ actor_type: ActorType; actor_id: string | null; actor_name: string | null }[]> {
  const { rows } = await tx.query(
    `SELECT DISTINCT ON (actor_type, actor_id) actor_type, actor_id, actor_name
       FROM activity WHERE org_id = $1 ORDER BY actor_type, actor_id, id DESC LIMIT 500`,
    [orgId],
  );
  return rows;
}
