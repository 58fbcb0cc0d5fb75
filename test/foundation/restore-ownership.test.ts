/**
 * A restore for a service that runs as its own user, as the systemd unit runs it
 * (`User=tagtrail`, the data directory its StateDirectory gives to that user), taken by an
 * operator as root: the restored files go to the data directory's owner, and the service
 * started as that user serves the restored cluster. A start that cannot read a cluster
 * (its files another user's) stops saying so and changes nothing in the data directory.
 * Both need root (to be another user); skipped otherwise.
 */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBackup } from '../../src/db/backup.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { restoreBackup } from '../../src/db/restore.js';
import {
  buildIfStale,
  childEnv,
  MAIN,
  ROOT,
  run,
  type ServiceProcess,
  spawnService,
} from '../helpers/compiled.js';
import { query } from '../helpers/pg-query.js';

/** The unit's service user: `nobody` stands in for `tagtrail`. */
const SERVICE_USER = { uid: 65534, gid: 65534 };
const asRoot = process.getuid?.() === 0;

let root: string;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'tagtrail-restore-owner-'));
  await chmod(root, 0o755);
  await buildIfStale();
}, 180_000);
afterAll(async () => {
  for (const service of services) await service.stop(10_000).catch(() => undefined);
  if (root) await rm(root, { recursive: true, force: true });
});

/** /var/lib/tagtrail as systemd makes it: the service user's, 0700. */
async function stateDirectory(name: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { mode: 0o700 });
  await chown(dir, SERVICE_USER.uid, SERVICE_USER.gid);
  return dir;
}

async function ownersUnder(path: string, found = new Set<number>()): Promise<Set<number>> {
  const stat = await lstat(path);
  found.add(stat.uid);
  if (stat.isDirectory())
    for (const child of await readdir(path)) await ownersUnder(join(path, child), found);
  return found;
}

describe.skipIf(!asRoot)('a restore as root for a service that runs as its own user', () => {
  it('gives every restored file to the data directory owner, whose service serves it and whose server a root backup runs as', async () => {
    const source = join(root, 'source');
    const server = await startEmbeddedPostgres(source);
    await query(server.adminUrl, 'CREATE TABLE restored_marker (note text)');
    await query(server.adminUrl, "INSERT INTO restored_marker VALUES ('before the backup')");
    const archive = join(root, 'nightly.tar.gz');
    await writeBackup(server, source, createWriteStream(archive));
    await server.stop();

    const target = await stateDirectory('state');
    await restoreBackup(createReadStream(archive), target);
    expect([...(await ownersUnder(target))]).toEqual([SERVICE_USER.uid]);

    const env = { TAGTRAIL_DATA_DIR: target, PORT: '0', HOST: '127.0.0.1', TAGTRAIL_MQTT_PORT: '0' };
    const service = await spawnService({ ...env, LOG_LEVEL: 'warn' }, 90_000, undefined, SERVICE_USER);
    services.push(service);
    expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    const password = (await readFile(join(target, 'postgres.password'), 'utf8')).trim();
    const port = (await readFile(join(target, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3];
    const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
    expect(await query(url, 'SELECT note FROM restored_marker')).toEqual([{ note: 'before the backup' }]);
    expect(await service.stop()).toEqual({ code: 0, signal: null });

    // An operator's backup as root of the stopped service (before an upgrade, say): the
    // server it starts runs as the cluster's owner, and leaves the files that user's.
    const again = join(root, 'before-upgrade.tar.gz');
    const backup = await run(
      process.execPath,
      [MAIN, 'backup', '--out', again],
      childEnv({ ...env, LOG_LEVEL: 'silent' }),
    );
    expect(backup.code, backup.stderr).toBe(0);
    expect(existsSync(again)).toBe(true);
    expect([...(await ownersUnder(target))]).toEqual([SERVICE_USER.uid]);
  }, 180_000);

  it('a start that cannot read the cluster stops saying whose it is, and leaves the password file', async () => {
    // A cluster restored by root before this fix: the server's files `postgres`'s (here root's).
    const dataDir = await stateDirectory('unreadable');
    const pgDir = join(dataDir, 'postgres');
    await mkdir(pgDir, { mode: 0o700 });
    await writeFile(join(pgDir, 'PG_VERSION'), '18\n');
    await writeFile(join(dataDir, 'postgres.password'), 'the restored password', { mode: 0o600 });
    await chown(join(dataDir, 'postgres.password'), SERVICE_USER.uid, SERVICE_USER.gid);

    const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const env = childEnv({
        TAGTRAIL_DATA_DIR: dataDir,
        PORT: '0',
        TAGTRAIL_MQTT_PORT: '0',
        LOG_LEVEL: 'warn',
      });
      const child = spawn(process.execPath, [MAIN, 'serve'], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
        ...SERVICE_USER,
      });
      let stderr = '';
      child.stderr?.on('data', (c) => {
        stderr += c;
      });
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`cannot read ${pgDir} (EACCES: permission denied`);
    expect(result.stderr).toContain(`it belongs to uid 0, and this process runs as uid ${SERVICE_USER.uid}`);
    // Not initialised over: no new password, no initdb work directory left.
    expect(await readFile(join(dataDir, 'postgres.password'), 'utf8')).toBe('the restored password');
    expect((await readdir(dataDir)).filter((name) => name.startsWith('postgres.init-'))).toEqual([]);
  }, 120_000);
});
