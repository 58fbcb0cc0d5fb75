import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Session } from './api.js';

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
