/**
 * Online backups of the embedded database (`tagtrail backup`, `tagtrail restore`): a backup
 * taken while the service runs and writes restores into a new data directory that starts,
 * replays, and serves everything committed before the backup began (the API key minted
 * before it included); the restore refuses a data directory in use and an archive that
 * names paths outside it; the CLI backs up a stopped data directory too.
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { createGzip } from 'node:zlib';
import pg from 'pg';
import { pack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { runBackup } from '../../src/cli/backup-commands.js';
import { writeBackup } from '../../src/db/backup.js';
import { type OpenedDatabase, openDatabase } from '../../src/db/connect.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { RestoreError, restoreBackup } from '../../src/db/restore.js';
import type { RunningService } from '../../src/runtime.js';
import { createServices, type Services } from '../../src/services.js';
import { ALL_SCOPES } from '../helpers/app.js';
import { buildIfStale, childEnv, MAIN, run } from '../helpers/compiled.js';
import { TEST_SECRETS } from '../helpers/secrets.js';
import { startTestService } from '../helpers/service.js';

let root: string;
const started: RunningService[] = [];
const opened: OpenedDatabase[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tagtrail-backup-'));
  // The embedded server runs as its own user when the tests run as root: it must reach in.
  await chmod(root, 0o755);
  await buildIfStale();
}, 180_000);
afterAll(async () => {
  for (const db of opened) await db.close().catch(() => undefined);
  for (const service of started) await service.stop().catch(() => undefined);
  if (root) await rm(root, { recursive: true, force: true });
});

/** The service on `dataDir`; without `keys`, its secret keys in the data directory's key file. */
function serve(dataDir: string, keys = true): Promise<RunningService> {
  return startTestService({
    TAGTRAIL_DATA_DIR: dataDir,
    ...(keys ? {} : { TAGTRAIL_SECRET_KEYS: undefined }),
  });
}

/** The services of the database a running service in `dataDir` serves (joined, not owned). */
async function servicesOn(dataDir: string): Promise<{ services: Services; database: OpenedDatabase }> {
  const database = await openDatabase({ dataDir }, { migrate: false, poolSize: 4 });
  opened.push(database);
  const services = await createServices(database.db, {
    TAGTRAIL_ENV: 'production',
    secrets: TEST_SECRETS,
    REDIS_URL: undefined,
    TAGTRAIL_RATE_LIMIT: 1000,
    TAGTRAIL_RATE_WINDOW_SECONDS: 60,
  });
  return { services, database };
}

async function assetCount(database: OpenedDatabase, orgId: number): Promise<number> {
  const { rows } = await database.db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM assets WHERE org_id = $1',
    [orgId],
  );
  return rows[0]!.n;
}

describe('a backup taken while the service writes', () => {
  it('restores into a new data directory that serves what was committed before it began', async () => {
    const first = join(root, 'first');
    const running = await serve(first);
    started.push(running);
    const { services, database } = await servicesOn(first);
    const org = await services.organizations.create('Backup Co');
    const caller = cliCaller(org.id);
    const { token } = await services.keys.mint({ caller, scopes: ALL_SCOPES });
    for (let i = 0; i < 20; i++) await services.assets.create(caller, { name: `Before ${i}` });

    // Creates go on through the whole backup, one after the other.
    let writing = true;
    let created = 20;
    const writer = (async () => {
      while (writing) {
        await services.assets.create(caller, { name: `During ${created}` });
        created++;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const committedBefore = created;
    const archive = join(root, 'online.tar.gz');
    const embedded = await startEmbeddedPostgres(first, { create: false });
    expect(embedded.owned).toBe(false);
    const summary = await writeBackup(embedded, first, createWriteStream(archive));
    writing = false;
    await writer;
    expect(summary.files).toBeGreaterThan(100);
    expect(summary.startLsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    const total = created;
    expect(await assetCount(database, org.id)).toBe(total);
    await services.close();
    await running.stop();

    const second = join(root, 'second');
    const restored = await restoreBackup(createReadStream(archive), second);
    expect(restored.files).toBe(summary.files);
    expect(existsSync(join(second, 'postgres', 'backup_label'))).toBe(true);
    const again = await serve(second);
    started.push(again);
    const reopened = await servicesOn(second);
    const count = await assetCount(reopened.database, org.id);
    expect(count).toBeGreaterThanOrEqual(committedBefore);
    expect(count).toBeLessThanOrEqual(total);
    // The key minted before the backup still opens the API of the restored service.
    const me = await fetch(`${again.url}/api/v1/orgs/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { id: number } }).data.id).toBe(org.id);
    const list = await fetch(`${again.url}/api/v1/assets?limit=200`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await list.json()) as { data: unknown[] }).data).toHaveLength(Math.min(count, 200));
    await reopened.services.close();
    await again.stop();

    // A data directory that holds a database is never overwritten.
    await expect(restoreBackup(createReadStream(archive), second)).rejects.toThrow(RestoreError);
  }, 180_000);
});

describe('a backup whose output fails', () => {
  it('fails (not hangs), ends the backup on the server, and the next one works', async () => {
    const dataDir = join(root, 'full-disk');
    const running = await serve(dataDir);
    started.push(running);
    const embedded = await startEmbeddedPostgres(dataDir, { create: false });
    // A disk that fills after `room` bytes: from the first one, while the data files are
    // copied, and later. Whenever it fills, the backup fails with that, and says so.
    const fullAfter = (room: number) => {
      let taken = 0;
      return new Writable({
        write(chunk: Buffer, _encoding, done) {
          taken += chunk.length;
          done(taken > room ? Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }) : null);
        },
      });
    };
    for (const room of [0, 1024, 64 * 1024, 256 * 1024, 4 * 1024 * 1024]) {
      await expect(writeBackup(embedded, dataDir, fullAfter(room)), `room ${room}`).rejects.toThrow(
        /no space left/,
      );
    }
    // Its session is gone, and with it the backup in progress and the slot holding WAL back.
    const admin = new pg.Client({ connectionString: embedded.adminUrl });
    await admin.connect();
    try {
      await expect
        .poll(async () => (await admin.query('SELECT slot_name FROM pg_replication_slots')).rows)
        .toEqual([]);
    } finally {
      await admin.end();
    }
    const archive = join(root, 'after-full.tar.gz');
    const summary = await writeBackup(embedded, dataDir, createWriteStream(archive));
    expect(summary.files).toBeGreaterThan(100);
    await running.stop();
  }, 120_000);

  it('tells the operator which file a full disk stopped and what to do, and removes it', async () => {
    const dataDir = join(root, 'full-disk-cli');
    const running = await serve(dataDir);
    started.push(running);
    const out = join(root, 'full', 'tagtrail.tar.gz');
    await mkdir(join(root, 'full'), { recursive: true });
    // Fails as a write to a file on a full disk does: the error names no file.
    const full = () =>
      new Writable({
        write(_chunk, _encoding, done) {
          done(
            Object.assign(new Error('ENOSPC: no space left on device, write'), {
              code: 'ENOSPC',
              errno: -28,
              syscall: 'write',
            }),
          );
        },
      });
    const failed = await runBackup(
      { out, priority: 'normal' },
      { dataDir, DATABASE_URL: undefined },
      full,
    ).then(
      () => null,
      (err: Error) => err,
    );
    expect(failed).toBeInstanceOf(Error);
    const message = (failed as Error).message;
    expect(message).toContain(
      `cannot write the backup ${out}.partial: ENOSPC: no space left on device, write`,
    );
    expect(message).toContain(`the file system holding ${join(root, 'full')} is full`);
    expect(message).toContain(
      'free space there, or give --out a file on another disk, and run the backup again',
    );
    expect(message).not.toMatch(/\n\s+at /);
    expect(await readdir(join(root, 'full'))).toEqual([]);
    await running.stop();
  }, 120_000);
});

describe('restore', () => {
  it('refuses an archive naming a path outside the data directory, and one that is no backup', async () => {
    const evil = pack();
    evil.entry({ name: '../escaped.txt' }, 'outside');
    evil.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of evil.pipe(createGzip())) chunks.push(chunk as Buffer);
    const target = join(root, 'evil');
    await expect(restoreBackup(Readable.from([Buffer.concat(chunks)]), target)).rejects.toThrow(
      /outside the data directory/,
    );
    expect(existsSync(join(root, 'escaped.txt'))).toBe(false);
    await expect(restoreBackup(Readable.from([Buffer.from('not gzip')]), join(root, 'junk'))).rejects.toThrow(
      /not a readable backup/,
    );
  });

  it('removes what it unpacked when the archive breaks partway, and nothing that was there before', async () => {
    const archive = await gzipped((tar) => {
      tar.entry({ name: 'postgres/', type: 'directory' });
      tar.entry({ name: 'postgres/PG_VERSION' }, '18\n');
      tar.entry({ name: 'postgres/base/1/1259' }, Buffer.alloc(64 * 1024, 7));
      tar.entry({ name: 'postgres/backup_label' }, 'START WAL LOCATION: 0/2000028\n');
    });
    // Cut inside the last entries: the first ones are written before the stream breaks.
    const cut = archive.subarray(0, archive.length - 40);
    const fresh = join(root, 'broken-fresh');
    await expect(restoreBackup(Readable.from([cut]), fresh)).rejects.toThrow(/not a readable backup/);
    expect(existsSync(fresh)).toBe(false);

    // A data directory the operator prepared: its own files and an empty postgres/ stay.
    const prepared = join(root, 'broken-prepared');
    await mkdir(join(prepared, 'postgres'), { recursive: true });
    await writeFile(join(prepared, 'secret-keys'), 'mine');
    await expect(restoreBackup(Readable.from([cut]), prepared)).rejects.toThrow(RestoreError);
    expect((await readdir(prepared)).sort()).toEqual(['postgres', 'secret-keys']);
    expect(await readdir(join(prepared, 'postgres'))).toEqual([]);
    expect(await readFile(join(prepared, 'secret-keys'), 'utf8')).toBe('mine');
  });

  it('refuses to overwrite a file already in the data directory, which it leaves as it was', async () => {
    const prepared = join(root, 'collides');
    await mkdir(prepared, { recursive: true });
    await writeFile(join(prepared, 'secret-keys'), 'mine');
    const archive = await gzipped((tar) => {
      tar.entry({ name: 'postgres/PG_VERSION' }, '18\n');
      tar.entry({ name: 'secret-keys' }, 'theirs');
      tar.entry({ name: 'postgres/backup_label' }, 'START WAL LOCATION: 0/2000028\n');
    });
    await expect(restoreBackup(Readable.from([archive]), prepared)).rejects.toThrow(
      /secret-keys exists already/,
    );
    expect(await readdir(prepared)).toEqual(['secret-keys']);
    expect(await readFile(join(prepared, 'secret-keys'), 'utf8')).toBe('mine');
  });
});

async function gzipped(fill: (tar: ReturnType<typeof pack>) => void): Promise<Buffer> {
  const tar = pack();
  fill(tar);
  tar.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of tar.pipe(createGzip())) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('tagtrail backup and restore', () => {
  it('back a stopped data directory up and restore it, from the command line', async () => {
    const dataDir = join(root, 'cli');
    const running = await serve(dataDir, false);
    await running.stop();
    const keyFile = await readFile(join(dataDir, 'secret-keys'), 'utf8');
    const archive = join(root, 'cli.tar.gz');
    // No TAGTRAIL_SECRET_KEYS: the commands use the data directory's key file, as a deployment does.
    const env = childEnv({
      TAGTRAIL_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      TAGTRAIL_SECRET_KEYS: undefined,
    });
    const backup = await run(process.execPath, [MAIN, 'backup', '--out', archive, '--json'], env);
    expect(backup.code, backup.stderr).toBe(0);
    // It copies and compresses at nice 10, so a service on the same cores keeps its CPU.
    expect(JSON.parse(backup.stdout)).toMatchObject({
      file: archive,
      files: expect.any(Number),
      nice: Math.max(getPriority(), 10),
    });
    const asStarted = await run(
      process.execPath,
      [MAIN, 'backup', '--out', join(root, 'cli-normal.tar.gz'), '--priority', 'normal', '--json'],
      env,
    );
    expect(asStarted.code, asStarted.stderr).toBe(0);
    expect(JSON.parse(asStarted.stdout)).toMatchObject({ nice: getPriority() });
    const bogus = await run(process.execPath, [MAIN, 'backup', '--out', archive, '--priority', 'high'], env);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('--priority must be low or normal');
    expect(existsSync(`${archive}.partial`)).toBe(false);
    // The command started the server for the backup and stopped it again.
    expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);

    const target = join(root, 'cli-restored');
    const restore = await run(process.execPath, [MAIN, 'restore', archive, '--json'], {
      ...env,
      TAGTRAIL_DATA_DIR: target,
    });
    expect(restore.code, restore.stderr).toBe(0);
    // The key that seals the stored secrets comes back with the database it opens.
    expect(await readFile(join(target, 'secret-keys'), 'utf8')).toBe(keyFile);
    expect(existsSync(join(target, 'postgres.password'))).toBe(true);
    const refused = await run(process.execPath, [MAIN, 'backup', '--out', archive], {
      ...env,
      DATABASE_URL: 'postgres://127.0.0.1:1/x',
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('DATABASE_URL is set');
  }, 180_000);
});
