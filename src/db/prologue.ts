import pg from 'pg';
import type { Caller } from '../caller.js';

// The statements that open an organization's transaction (src/db/pool.ts): built here as
// text, sent by inTransaction (./transaction.ts) in the same write as the work.

/** The organization a transaction is for. */
export const orgOf = (scope: number | Caller): number => (typeof scope === 'number' ? scope : scope.orgId);

export function checkOrgId(orgId: number): void {
  if (!Number.isSafeInteger(orgId) || orgId < 1) throw new Error(`invalid organization id ${orgId}`);
}

/**
 * The opening of a transaction as the restricted role with the organization set (row-level
 * security) and, for a Caller, its actor (`tagtrail.actor`, read by the activity triggers).
 */
export function orgPrologue(begin: string, scope: number | Caller): string {
  const orgId = orgOf(scope);
  checkOrgId(orgId);
  // One round trip; orgId is a checked integer and the actor an escaped literal. SET LOCAL,
  // a utility statement, costs the server less than `SELECT set_config(...)`, which goes
  // through the planner and the executor and answers with a row (pgbench, the opening alone:
  // 7-19% more transactions per second).
  const actor = typeof scope === 'number' ? '' : `; SET LOCAL tagtrail.actor = ${actorLiteral(scope)}`;
  // No SET LOCAL ROLE: the connection (appPool) is the restricted role since it started.
  return `${begin}; SET LOCAL tagtrail.org_id = '${orgId}'${actor}`;
}

/**
 * ReadOptions.snapshot's opening: every statement sees the data as of the first one
 * (REPEATABLE READ), so pages read one after another page one unchanging list. Such a
 * transaction waits for its reader between statements (an export's download); a reader
 * that stalls must not hold a connection and a snapshot (which keeps VACUUM from removing
 * dead rows) forever, so the server ends the session after SNAPSHOT_IDLE_MS idle in it.
 */
export const SNAPSHOT_IDLE_MS = 60_000;
export const SNAPSHOT_BEGIN = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET LOCAL idle_in_transaction_session_timeout = ${SNAPSHOT_IDLE_MS}`;

/** ReadOptions.genericPlans, a clause of the prologue (SET LOCAL, as the organization's). */
export const GENERIC_PLANS = '; SET LOCAL plan_cache_mode = force_generic_plan';

/** The caller's actor as the SQL literal of its JSON (escapeLiteral copes with quotes and backslashes). */
function actorLiteral(caller: Caller): string {
  const { actor } = caller;
  const json = JSON.stringify({
    type: actor.type,
    id: actor.type === 'cli' ? null : String(actor.id),
    name: actor.name,
  });
  return pg.escapeLiteral(json);
}
