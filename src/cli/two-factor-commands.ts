import type { Command } from 'commander';
import { cliCaller } from '../caller.js';
import { id } from './args.js';
import { print } from './output.js';
import { withOrganization } from './with-services.js';

/**
 * `tagtrail two-factor reset`: the operator's way back in for a person who lost the
 * authenticator app and the recovery codes when no other admin can reset it (the
 * organization's only admin). The same reset as the Members page's, recorded in the
 * activity log as the operator's (`cli`).
 */
export function registerTwoFactorCommands(program: Command): void {
  const twoFactor = program.command('two-factor').description("people's two-factor sign-in");
  twoFactor
    .command('reset')
    .description("turn off a member's two-factor sign-in and end their sessions")
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .requiredOption('--email <address>', "the member's email address")
    .option('--json', 'print JSON')
    .action((opts: { org: number; email: string; json?: boolean }) =>
      withOrganization(opts.org, async (s) => {
        const reset = await s.internal.totp.resetForEmail(cliCaller(opts.org), opts.email);
        print(Boolean(opts.json), {
          org_id: opts.org,
          user_id: reset.userId,
          email: reset.email,
          reset: true,
        });
      }),
    );
}
