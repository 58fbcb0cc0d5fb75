#!/usr/bin/env node
import { Command } from 'commander';
import { buildInfo } from '../build-info.js';
import { describeFailure, registerCommands } from './commands.js';
import { interrupted, stopCommandOnSignals, stoppedByClosedOutput } from './interrupt.js';
import { allowDatabaseCreation } from './open.js';

const build = buildInfo();
const program = new Command('tagtrail')
  .description('tagtrail: asset and location tracking service')
  .version(`${build.version} (database schema ${build.schema})`, '-V, --version')
  .option('--init', 'create the embedded database in TAGTRAIL_DATA_DIR if there is none yet')
  .showHelpAfterError()
  .exitOverride()
  .hook('preAction', (command, action) => {
    allowDatabaseCreation(Boolean(command.opts().init));
    // `serve` stops on its signals itself (commands.ts); every other command as interrupt.ts says.
    if (!(action.name() === 'serve' && action.parent === program)) stopCommandOnSignals();
  });
registerCommands(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  // Failing because a signal is stopping it: the signal's handler exits once the cleanup is done.
  if (interrupted() || stoppedByClosedOutput(err)) return;
  const code = (err as { code?: string }).code;
  if (code === 'commander.helpDisplayed' || code === 'commander.version') process.exit(0);
  if (typeof code === 'string' && code.startsWith('commander.')) process.exit(2);
  process.stderr.write(`tagtrail: ${describeFailure(err)}\n`);
  process.exit(1);
});
