import { userInfo } from 'node:os';
/**
 * Who is making a change: the value the services' write methods take besides the
 * organization, so the activity log (migration 0035) can say who changed what. A plain
 * value built by whoever received the request (a route from its session or API key, the
 * CLI from its operator), so the services stay free of HTTP.
 */
export type Actor =
  | { type: 'user'; id: number; name: string }
  | { type: 'api_key'; id: string; name: string }
  | { type: 'cli'; name: string };

export interface Caller {
  orgId: number;
  actor: Actor;
}

/** A change made on behalf of a signed-in person. */
export const userCaller = (orgId: number, user: { id: number; email: string }): Caller => ({
  orgId,
  actor: { type: 'user', id: user.id, name: user.email },
});

/** A change made by an operator from the command line, named by their login on that machine. */
export function cliActor(): Actor {
  let name = 'operator';
  try {
    name = userInfo().username || name;
  } catch {
    // No passwd entry for this uid (a container): the generic name.
  }
  return { type: 'cli', name };
}

export const cliCaller = (orgId: number): Caller => ({ orgId, actor: cliActor() });
