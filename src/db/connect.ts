import type { Config } from '../config.js';
import { hideUserInfo } from '../url-user-info.js';
import { checkAppRole } from './app-role.js';
import {
  type EmbeddedPostgres,
  type EmbeddedStartOptions,
  ensureDatabase,
  startEmbeddedPostgres,
} from './embedded.js';
import { migrate } from './migrate.js';
import { createDatabase, type Database } from './pool.js';
import { defaultPoolSize, embeddedMaxConnections } from './pool-size.js';
import { isDatabaseUnavailable } from './unavailable.js';

export const EMBEDDED_DATABASE = 'tagtrail';

/**
 * The first connection to DATABASE_URL failed: the message names the setting and its
 * server (the password hidden), which the driver's own ("connect ECONNREFUSED
 * 127.0.0.1:5433", "password authentication failed for user …") leaves to be guessed.
 */
export class DatabaseUrlError extends Error {
  constructor(url: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `cannot connect to DATABASE_URL (${hideUserInfo(url)}): ${reason.replace(/^database unavailable: /, '')}`,
      {
        cause,
      },
    );
    this.name = 'DatabaseUrlError';
  }
}

/** Unreachable, refused login (SQLSTATE class 28) or no such database (3D000). */
function cannotConnect(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return (
    isDatabaseUnavailable(err) || (typeof code === 'string' && (code.startsWith('28') || code === '3D000'))
  );
}

export interface OpenedDatabase {
  db: Database;
  /** Set when the embedded server is in use. */
  embedded?: EmbeddedPostgres;
  close(): Promise<void>;
}

/**
 * `DATABASE_URL` when set, otherwise the embedded server in the data directory; migrated.
 * Pools of `options.poolSize` connections, else DATABASE_POOL_SIZE, else defaultPoolSize().
 */
export async function openDatabase(
  config: Pick<Config, 'DATABASE_URL' | 'dataDir' | 'DATABASE_POOL_SIZE'>,
  // create, role, onWait, onNotice, signal: the embedded server's start (startEmbeddedPostgres).
  options: { migrate?: boolean; poolSize?: number } & EmbeddedStartOptions = {},
): Promise<OpenedDatabase> {
  let embedded: EmbeddedPostgres | undefined;
  let url = config.DATABASE_URL;
  const poolSize = options.poolSize ?? config.DATABASE_POOL_SIZE ?? defaultPoolSize();
  if (!url) {
    const { migrate: _, poolSize: __, ...start } = options;
    const server = await startEmbeddedPostgres(config.dataDir, {
      maxConnections: embeddedMaxConnections(poolSize),
      ...start,
    });
    embedded = server;
    await ensureDatabase(server.adminUrl, EMBEDDED_DATABASE).catch(async (err) => {
      await server.stop();
      throw err;
    });
    url = embedded.urlFor(EMBEDDED_DATABASE);
  }
  const db = createDatabase(url, { max: poolSize });
  try {
    if (options.migrate !== false) {
      await migrate(db.pool);
      await checkAppRole(db.pool);
    } else if (config.DATABASE_URL) await db.ping();
  } catch (err) {
    await db.close();
    await embedded?.stop();
    throw config.DATABASE_URL && cannotConnect(err) ? new DatabaseUrlError(config.DATABASE_URL, err) : err;
  }
  let closed: Promise<void> | undefined;
  return {
    db,
    embedded,
    // Once: a command interrupted by a signal closes it from there and from its own unwinding.
    close() {
      closed ??= (async () => {
        await db.close();
        await embedded?.stop();
      })();
      return closed;
    },
  };
}
