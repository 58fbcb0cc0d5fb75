import type { Config } from '../config.js';
import { type EmbeddedPostgres, ensureDatabase, startEmbeddedPostgres } from './embedded.js';
import type { EmbeddedOwner, EmbeddedRole } from './embedded-owner.js';
import { migrate } from './migrate.js';
import { createDatabase, type Database } from './pool.js';
import { defaultPoolSize } from './pool-size.js';

export const EMBEDDED_DATABASE = 'tagtrail';

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
  // create: false refuses a data directory without a database instead of initialising one.
  // role and onWait: whose embedded server may be joined (startEmbeddedPostgres).
  options: {
    migrate?: boolean;
    poolSize?: number;
    create?: boolean;
    role?: EmbeddedRole;
    onWait?: (owner: EmbeddedOwner) => void;
  } = {},
): Promise<OpenedDatabase> {
  let embedded: EmbeddedPostgres | undefined;
  let url = config.DATABASE_URL;
  if (!url) {
    embedded = await startEmbeddedPostgres(config.dataDir, {
      create: options.create,
      role: options.role,
      onWait: options.onWait,
    });
    await ensureDatabase(embedded.adminUrl, EMBEDDED_DATABASE);
    url = embedded.urlFor(EMBEDDED_DATABASE);
  }
  const db = createDatabase(url, {
    max: options.poolSize ?? config.DATABASE_POOL_SIZE ?? defaultPoolSize(),
  });
  try {
    if (options.migrate !== false) await migrate(db.pool);
  } catch (err) {
    await db.close();
    await embedded?.stop();
    throw err;
  }
  return {
    db,
    embedded,
    async close() {
      await db.close();
      await embedded?.stop();
    },
  };
}
