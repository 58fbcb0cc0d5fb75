import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { exportActivity } from '../activity/export.js';
import type { Config } from '../config.js';
import { parseRfc3339 } from '../http/timestamps.js';
import type { Services } from '../services.js';

type WithServices = <T>(fn: (services: Services, config: Config) => Promise<T>) => Promise<T>;

/** Writes a chunk, waiting for the stream to drain when its buffer is full. */
async function writeTo(out: Writable, chunk: string): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

export function registerActivityCommands(program: Command, withServices: WithServices): void {
  const activity = program.command('activity').description('the activity log: who changed what');
  activity
    .command('export')
    .description("write an organization's activity log as NDJSON, oldest first")
    .requiredOption('--org <id>', 'organization id', (value: string) => {
      if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 2147483647) {
        throw new Error('--org must be a positive integer');
      }
      return Number(value);
    })
    .option('--since <time>', 'only entries at or after this RFC 3339 instant', (value: string) => {
      const ms = parseRfc3339(value);
      if (ms === null) throw new Error('--since must be an RFC 3339 timestamp, e.g. 2026-01-31T00:00:00Z');
      return new Date(ms);
    })
    .option('--out <file>', 'write to this file instead of standard output')
    .action((opts: { org: number; since?: Date; out?: string }) =>
      withServices(async (s) => {
        const organization = await s.organizations.get(opts.org);
        const out: Writable = opts.out ? createWriteStream(opts.out) : process.stdout;
        const count = await exportActivity(s.internal.db, organization.id, { since: opts.since }, (line) =>
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
