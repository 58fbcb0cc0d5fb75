import type { Command } from 'commander';
import type { Services } from '../services.js';
import { id } from './args.js';
import { print } from './output.js';
import { withOrganization } from './with-services.js';

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

export function registerSessionCommands(program: Command): void {
  const session = program.command('session').description('web sessions');
  session
    .command('token')
    .description(
      'print a web session token (send it as the cookie tagtrail_session=<token>) and its CSRF token',
    )
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .option('--json', 'print JSON')
    .action((opts: { org: number; json?: boolean }) =>
      withOrganization(opts.org, async (s) =>
        print(Boolean(opts.json), await issueSessionToken(s, opts.org)),
      ),
    );
}
