import type { Tx } from '../db/pool.js';
import { conflict, type FieldError, validationError } from '../errors.js';
import { findLiveIdByKey, liveLocationExists } from './repository.js';
import { ancestorChain } from './repository-tree.js';

/** The two forms of the parent reference in a location write body. */
export interface ParentFields {
  parent_id?: number | null;
  parent_external_key?: string | null;
}

/** True when the body names a parent in either form (null included: detach to root). */
export function sendsParent(body: ParentFields): boolean {
  return body.parent_id !== undefined || body.parent_external_key !== undefined;
}

/** True when the body names an actual parent row (not only null). */
export function namesParentRow(body: ParentFields): boolean {
  return (
    (body.parent_id !== undefined && body.parent_id !== null) ||
    (body.parent_external_key !== undefined && body.parent_external_key !== null)
  );
}

type Resolution = { field: string; sent: number | string | null; id: number | null | 'missing' };

/**
 * The parent a write body names: undefined when neither form is sent, null for root, or
 * the parent's id (API-SPEC "Location write rules", Errors details 3). Each form sent is
 * resolved first: a parent exists when it is a live location of the organization,
 * whatever its validity window. An unresolvable form is `fk_not_found` (and then no
 * `ambiguous_fields`); two forms resolving to different parents (null, the root, counts
 * as one) are `ambiguous_fields` on both; two naming the same parent are one operation.
 */
export async function resolveParent(
  tx: Tx,
  orgId: number,
  body: ParentFields,
): Promise<number | null | undefined> {
  const sides: Resolution[] = [];
  if (body.parent_id !== undefined) {
    const sent = body.parent_id;
    const id = sent === null ? null : (await liveLocationExists(tx, orgId, sent)) ? sent : 'missing';
    sides.push({ field: 'parent_id', sent, id });
  }
  if (body.parent_external_key !== undefined) {
    const sent = body.parent_external_key;
    const id = sent === null ? null : ((await findLiveIdByKey(tx, orgId, sent)) ?? 'missing');
    sides.push({ field: 'parent_external_key', sent, id });
  }
  if (sides.length === 0) return undefined;

  const missing: FieldError[] = sides
    .filter((s) => s.id === 'missing')
    .map((s) => ({
      field: s.field,
      code: 'fk_not_found',
      message: `${s.field} ${JSON.stringify(s.sent)} does not name an existing location`,
      params: { value: s.sent },
    }));
  if (missing.length > 0) throw validationError(missing);

  const [first, second] = sides as [Resolution, Resolution | undefined];
  if (second && second.id !== first.id) {
    const describe = (s: Resolution) => (s.id === null ? 'the root' : `location ${s.id}`);
    throw validationError(
      sides.map((s, i) => ({
        field: s.field,
        code: 'ambiguous_fields',
        message: `${s.field}: parent_id and parent_external_key name different parents (${describe(first)} and ${describe(second)}); send one, or both naming the same location`,
        params: { exclusive_with: sides[1 - i]!.field },
      })),
    );
  }
  return first.id as number | null;
}

/**
 * A move of `location` under `parentId` must not make it its own ancestor: the parent
 * is neither the location nor any of its descendants. The conflict names the cycle,
 * from the new parent up to the moved location. Call under the tree lock.
 */
export async function assertNoCycle(
  tx: Tx,
  orgId: number,
  location: { id: number; external_key: string },
  parentId: number,
): Promise<void> {
  const key = location.external_key;
  if (parentId === location.id) {
    throw conflict(`moving ${key} under ${key} would create a cycle: ${key} → ${key}`);
  }
  const chain = await ancestorChain(tx, orgId, parentId);
  const at = chain.findIndex((a) => a.id === location.id);
  if (at < 0) return;
  const path = chain.slice(0, at + 1).map((a) => a.external_key);
  throw conflict(`moving ${key} under ${chain[0]!.external_key} would create a cycle: ${path.join(' → ')}`);
}
