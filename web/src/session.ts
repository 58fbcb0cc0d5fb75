import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role, Session } from './api.js';

export interface SessionState {
  session: Session;
  /** Replace the session (after sign-in) or clear it (after sign-out). */
  setSession(session: Session | null): void;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside a signed-in page');
  return state;
}

const RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2 };

/** Whether a role includes another (viewer < editor < admin). */
export const roleIncludes = (role: Role, needed: Role): boolean => RANK[role] >= RANK[needed];

/**
 * Whether the signed-in person's role includes `needed`: what the app offers follows it,
 * as the service's checks do (docs/web-app.md "Roles and members").
 */
export function useCan(): (needed: Role) => boolean {
  const { session } = useSession();
  return (needed) => roleIncludes(session.user.role, needed);
}
