import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { exportActivity } from '../activity/export.js';
import { id, instant } from './args.js';
import { withOrganization } from './with-services.js';

/** Writes a chunk, waiting for the stream to drain when its buffer is full. */
async function writeTo(out: Writable, chunk: string): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

export function registerActivityCommands(program: Command): void {
  const activity = program.command('activity').description('the activity log: who changed what');
  activity
    .command('export')
    .description("write an organization's activity log as NDJSON, oldest first")
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .option('--since <time>', 'only entries at or after this RFC 3339 instant', instant('--since'))
    .option('--out <file>', 'write to this file instead of standard output')
    .action((opts: { org: number; since?: Date; out?: string }) =>
      withOrganization(opts.org, async (s) => {
        const out: Writable = opts.out ? createWriteStream(opts.out) : process.stdout;
        const count = await exportActivity(s.internal.db, opts.org, { since: opts.since }, (line) =>
          writeTo(out, line),
        );
        if (opts.out) {
          out.end();
          await once(out, 'finish');
          process.stderr.write(`${count} entries written to ${opts.out}\n`);
        }
      }),
    );
}
