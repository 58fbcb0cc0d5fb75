import type { Command } from 'commander';
import type { Config } from '../config.js';
import type { Services } from '../services.js';
import { print } from './output.js';

type WithServices = <T>(fn: (services: Services, config: Config) => Promise<T>) => Promise<T>;

export interface SessionTokenOutput extends Record<string, unknown> {
  token: string;
  csrf_token: string;
  user_id: number;
  expires_at: string;
}

/**
 * A web session for a user of the organization (its first administrator, created as
 * `admin@org-ID.local` with a random password when it has no user): for scripts and
 * tests that drive /internal/ without signing in.
 */
export async function issueSessionToken(services: Services, orgId: number): Promise<SessionTokenOutput> {
  const user = await services.internal.accounts.operatorUser(orgId);
  const issued = await services.internal.sessions.create(orgId, user.id);
  return {
    token: issued.token,
    csrf_token: issued.csrfToken,
    user_id: user.id,
    expires_at: issued.expiresAt.toISOString(),
  };
}

export function registerSessionCommands(program: Command, withServices: WithServices): void {
  const session = program.command('session').description('web sessions');
  session
    .command('token')
    .description(
      'print a web session token (send it as the cookie tagtrail_session=<token>) and its CSRF token',
    )
    .requiredOption('--org <id>', 'organization id', (value: string) => {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 2147483647) {
        throw new Error('--org must be a positive integer');
      }
      return Number(value);
    })
    .option('--json', 'print JSON')
    .action((opts: { org: number; json?: boolean }) =>
      withServices(async (s) => print(Boolean(opts.json), await issueSessionToken(s, opts.org))),
    );
}
