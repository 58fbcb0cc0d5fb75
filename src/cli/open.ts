import type { Config } from '../config.js';
import { type OpenedDatabase, openDatabase } from '../db/connect.js';
import { type EmbeddedOwner, waitingLine } from '../db/embedded-owner.js';
import type { Database } from '../db/pool.js';
import { loadSecretBox } from '../secrets/key-ring.js';
import { createServices, type Services } from '../services.js';
import { interruption, onInterrupt } from './interrupt.js';

let allowCreate = false;

/** Set from the global `--init` option: only then may a CLI command create a new embedded database. */
export function allowDatabaseCreation(allow: boolean): void {
  allowCreate = allow;
}

/**
 * The CLI's database: the service's. Unlike `serve`, a command does not initialise an empty
 * data directory unless `--init` was given, so running it from the wrong directory says so.
 * A signal (interrupt.ts) ends a wait for another process's server or a start of its own,
 * and closes the database opened, stopping the embedded server if the command started it.
 */
export async function openCliDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'dataDir'>,
  options: { migrate?: boolean; poolSize?: number } = {},
): Promise<OpenedDatabase> {
  const opening = openDatabase(config, {
    ...options,
    create: allowCreate,
    onWait: announceWait(config.dataDir),
    onNotice: notice,
    signal: interruption,
  });
  onInterrupt(() =>
    opening.then(
      (opened) => opened.close(),
      () => undefined,
    ),
  );
  return opening;
}

/**
 * A command waits for an embedded server that another command started (that command stops
 * it when done) and says so on standard error, where its output does not go.
 */
export const announceWait = (dataDir: string) => (owner: EmbeddedOwner) => {
  process.stderr.write(`${waitingLine(dataDir, owner)}\n`);
};

/** A line for the operator (a server left running by a dead process taken over), on standard error. */
export const notice = (line: string) => {
  process.stderr.write(`${line}\n`);
};

/**
 * The services a command runs on the CLI's database: without Redis (one command needs no
 * shared rate-limit buckets) and with the deployment's secret keys, as the service has them.
 */
export async function createCliServices(db: Database, config: Config): Promise<Services> {
  const { box: secrets } = await loadSecretBox(config);
  return createServices(db, { ...config, REDIS_URL: undefined, secrets });
}
