import type { UserRole } from '../../src/auth-types.js';
import { type Browser, browser, type InternalTestApp, uniqueEmail } from './helpers.js';

/**
 * A further person of the organization, inserted directly (the matrix needs people of each
 * role, not the invitation flow, which test/internal/members.test.ts covers).
 */
export async function addMember(
  t: InternalTestApp,
  orgId: number,
  role: UserRole,
): Promise<{ id: number; email: string }> {
  const email = uniqueEmail(role);
  const { rows } = await t.database.db.pool.query<{ id: number }>(
    'INSERT INTO users (org_id, email, role) VALUES ($1, $2, $3) RETURNING id',
    [orgId, email, role],
  );
  return { id: rows[0]!.id, email };
}

/** A signed-in browser of a user, through a session made by the service itself. */
export async function browserOf(
  t: InternalTestApp,
  orgId: number,
  user: { id: number; email: string },
): Promise<Browser> {
  const issued = await t.services.internal.sessions.create(orgId, user.id);
  return browser(t.app, issued.token, issued.csrfToken, { orgId, userId: user.id, email: user.email });
}
