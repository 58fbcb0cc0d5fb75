/**
 * Writes that hold an organization's keyspace or tree lock release it at their COMMIT,
 * before that commit's WAL flush, and return only once the commit is durable
 * (releaseBeforeFlush, src/db/pool.ts; docs/performance.md step 10).
 *
 * "Durable" is made observable on a private server configured with a synchronous standby
 * that never connects: every synchronous commit then waits (wait event SyncRep) until the
 * setting is reset, as it would for a flush that has not happened yet. A write whose
 * answer did not wait for durability returns while the standby is missing; one that
 * flushed under its lock keeps the next create waiting on the lock instead of on SyncRep.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { AssetService } from '../../src/assets/service.js';
import { type Caller, cliCaller } from '../../src/caller.js';
import { migrate } from '../../src/db/migrate.js';
import { createDatabase, type Database } from '../../src/db/pool.js';
import type { Location } from '../../src/locations/schemas.js';
import { LocationService } from '../../src/locations/service.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';

let server: PrivatePostgres;
let db: Database;
let admin: pg.Client;
let caller: Caller;

beforeAll(async () => {
  server = await startPrivatePostgres();
  const setup = new pg.Client({ connectionString: server.urlFor('postgres') });
  await setup.connect();
  await setup.query('CREATE DATABASE tagtrail');
  await setup.end();
  db = createDatabase(server.urlFor('tagtrail'), { max: 10 });
  await migrate(db.pool);
  const { rows } = await db.pool.query<{ id: number }>(
    `INSERT INTO organizations (name) VALUES ('Durable') RETURNING id`,
  );
  caller = cliCaller(rows[0]!.id);
  admin = new pg.Client({ connectionString: server.urlFor('tagtrail') });
  await admin.connect();
}, 180_000);

afterAll(async () => {
  await admin?.end().catch(() => undefined);
  await db?.close().catch(() => undefined);
  await server?.destroy();
}, 120_000);

/** Sessions of the test database in the given wait (`SyncRep`: a commit waiting to be durable). */
async function waiting(event: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event = $1 AND pid <> pg_backend_pid()`,
    [event],
  );
  return rows[0]!.n;
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Tracked<T> {
  promise: Promise<T>;
  settled(): boolean;
}

/** A promise and whether it has settled yet. */
function tracked<T>(promise: Promise<T>): Tracked<T> {
  let settled = false;
  const done = () => {
    settled = true;
  };
  promise.then(done, done);
  return { promise, settled: () => settled };
}

/**
 * Runs `fn` while synchronous commits cannot become durable, then lets them: whatever `fn`
 * leaves waiting is released at the end.
 */
async function withoutDurability(fn: () => Promise<void>): Promise<void> {
  await admin.query(`ALTER SYSTEM SET synchronous_standby_names = 'tagtrail_never_connects'`);
  await admin.query('SELECT pg_reload_conf()');
  const probe = new pg.Client({ connectionString: server.urlFor('tagtrail') });
  try {
    // The setting reaches commits asynchronously (the checkpointer publishes it): a probe's
    // commit waiting on SyncRep shows it has; it is then cancelled (it stays committed).
    await probe.connect();
    probe.on('notice', () => undefined);
    const pid = (await probe.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const waitOf = async () =>
      (
        await admin.query<{ e: string | null }>(
          'SELECT wait_event AS e FROM pg_stat_activity WHERE pid = $1',
          [pid],
        )
      ).rows[0]?.e;
    for (;;) {
      const commit = tracked(probe.query("SELECT pg_logical_emit_message(true, 'probe', '')"));
      await until(
        'a probe commit waits or returns',
        async () => commit.settled() || (await waitOf()) === 'SyncRep',
      );
      if (commit.settled()) continue;
      await admin.query('SELECT pg_cancel_backend($1)', [pid]);
      await commit.promise.catch(() => undefined);
      break;
    }
    await fn();
  } finally {
    await admin.query('ALTER SYSTEM RESET synchronous_standby_names');
    await admin.query('SELECT pg_reload_conf()');
    await probe.end().catch(() => undefined);
  }
}

async function liveKeys(table: 'assets' | 'locations'): Promise<string[]> {
  const { rows } = await admin.query<{ k: string }>(
    `SELECT external_key AS k FROM ${table} WHERE org_id = $1 AND deleted_at IS NULL ORDER BY 1`,
    [caller.orgId],
  );
  return rows.map((r) => r.k);
}

describe('writes under the keyspace lock', { timeout: 120_000 }, () => {
  it('a keyless asset create releases the lock at COMMIT and answers only once durable', async () => {
    const assets = new AssetService(db);
    let first!: Tracked<Asset>;
    let second!: Tracked<Asset>;
    await withoutDurability(async () => {
      first = tracked(assets.create(caller, { name: 'First' }));
      await until('the first create waits to be durable', async () => (await waiting('SyncRep')) >= 1);
      // The first holds no lock while it waits: the second chooses its slot and commits too.
      second = tracked(assets.create(caller, { name: 'Second' }));
      await until('the second create waits to be durable', async () => (await waiting('SyncRep')) >= 2);
      expect(await liveKeys('assets')).toEqual(['ASSET-0001', 'ASSET-0002']);
      // Committed and visible, but neither answered: neither is durable yet.
      expect(first.settled()).toBe(false);
      expect(second.settled()).toBe(false);
    });
    const keys = [(await first.promise).external_key, (await second.promise).external_key];
    expect(keys).toEqual(['ASSET-0001', 'ASSET-0002']);

    // A delete that frees an auto key's slot (its trigger takes the keyspace lock) too.
    const firstId = (await first.promise).id;
    let removed!: Tracked<void>;
    let third!: Tracked<Asset>;
    await withoutDurability(async () => {
      removed = tracked(assets.remove(caller, firstId));
      await until('the delete waits to be durable', async () => (await waiting('SyncRep')) >= 1);
      third = tracked(assets.create(caller, { name: 'Third' }));
      await until('the third create waits to be durable', async () => (await waiting('SyncRep')) >= 2);
      expect(removed.settled()).toBe(false);
      expect(third.settled()).toBe(false);
    });
    await removed.promise;
    expect((await third.promise).external_key).toBe('ASSET-0001');
  });

  it('location creates, keyless or not, release the keyspace and tree locks at COMMIT and answer once durable', async () => {
    const locations = new LocationService(db);
    const root = await locations.create(caller, { external_key: 'SITE', name: 'Site' });
    let keyless!: Tracked<Location>;
    let keyed!: Tracked<Location>;
    await withoutDurability(async () => {
      keyless = tracked(locations.create(caller, { name: 'Hall', parent_id: root.id }));
      await until('the keyless create waits to be durable', async () => (await waiting('SyncRep')) >= 1);
      keyed = tracked(locations.create(caller, { external_key: 'DOCK', name: 'Dock', parent_id: root.id }));
      await until('the keyed create waits to be durable', async () => (await waiting('SyncRep')) >= 2);
      expect(await liveKeys('locations')).toEqual(['DOCK', 'LOC-0001', 'SITE']);
      expect(keyless.settled()).toBe(false);
      expect(keyed.settled()).toBe(false);
    });
    expect((await keyless.promise).external_key).toBe('LOC-0001');
    expect((await keyed.promise).external_key).toBe('DOCK');
  });
});
