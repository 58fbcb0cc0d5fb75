/**
 * deploy/systemd/tagtrail.service: systemd reads it without a complaint, and what it
 * promises matches the service (the data directory it makes writable is the one the
 * service is told to use; reload is the SIGHUP that takes renewed certificates; the env
 * file names only settings the service knows). tagtrail-backup.service and its timer:
 * systemd reads them, they back up the service's data directory, and their commands, run
 * as systemd would run them, write a dated archive and remove only the old ones.
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, MAX_SHUTDOWN_DRAIN_SECONDS, SETTINGS } from '../../src/config.js';
import { buildIfStale, childEnv, MAIN, ROOT, run } from '../helpers/compiled.js';

const UNIT = join(ROOT, 'deploy/systemd/tagtrail.service');
const BACKUP_UNIT = join(ROOT, 'deploy/systemd/tagtrail-backup.service');
const BACKUP_TIMER = join(ROOT, 'deploy/systemd/tagtrail-backup.timer');
const ENV = join(ROOT, 'deploy/systemd/tagtrail.env');
const hasSystemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

/** The unit's settings of one section, key to values in order. */
function section(text: string, name: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) current = line;
    else if (current === `[${name}]` && line && !line.startsWith('#')) {
      const at = line.indexOf('=');
      const key = line.slice(0, at);
      settings.set(key, [...(settings.get(key) ?? []), line.slice(at + 1)]);
    }
  }
  return settings;
}

describe('the systemd unit', () => {
  it.skipIf(!hasSystemdAnalyze)('passes systemd-analyze verify without a warning', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tagtrail-unit-'));
    try {
      // verify looks for ExecStart's program: this machine's node and the built CLI.
      const unit = (await readFile(UNIT, 'utf8')).replace(
        'ExecStart=/usr/bin/node /opt/tagtrail/dist/src/cli/main.js serve',
        `ExecStart=${process.execPath} ${MAIN} serve`,
      );
      expect(unit).not.toBe(await readFile(UNIT, 'utf8'));
      await writeFile(join(dir, 'tagtrail.service'), unit);
      const verified = spawnSync('systemd-analyze', ['verify', join(dir, 'tagtrail.service')], {
        encoding: 'utf8',
      });
      expect(verified.stderr).toBe('');
      expect(verified.status).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps its data in the state directory it creates, reloads with SIGHUP and stops with SIGTERM', async () => {
    const service = section(await readFile(UNIT, 'utf8'), 'Service');
    expect(service.get('StateDirectory')).toEqual(['tagtrail']);
    expect(service.get('Environment')).toContain('TAGTRAIL_DATA_DIR=/var/lib/tagtrail');
    expect(service.get('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID']);
    expect(service.get('KillSignal')).toEqual(['SIGTERM']);
    expect(service.get('KillMode')).toEqual(['mixed']);
    expect(service.get('ExecStart')).toEqual(['/usr/bin/node /opt/tagtrail/dist/src/cli/main.js serve']);
    // The longest drain before the stop (TAGTRAIL_SHUTDOWN_DRAIN_SECONDS) and the stop's own
    // 90 s fit before systemd kills what is left.
    expect(Number(service.get('TimeoutStopSec'))).toBeGreaterThanOrEqual(MAX_SHUTDOWN_DRAIN_SECONDS + 90);
    // V8 must be able to write the code it runs.
    expect(service.has('MemoryDenyWriteExecute')).toBe(false);
  });

  it('its env file names only settings the service knows, and the ones it sets are valid', async () => {
    const set: NodeJS.ProcessEnv = {};
    const named: string[] = [];
    for (const raw of (await readFile(ENV, 'utf8')).split('\n')) {
      // `#NAME=value` is a setting left for the operator to fill in.
      const commented = /^#([A-Z][A-Z0-9_]*)=/.exec(raw);
      if (commented) named.push(commented[1] as string);
      const line = raw.trim();
      if (!line || line.startsWith('#')) continue;
      const at = line.indexOf('=');
      set[line.slice(0, at)] = line.slice(at + 1);
      named.push(line.slice(0, at));
    }
    expect(named).toEqual(
      expect.arrayContaining(['TAGTRAIL_TLS_CERT', 'DATABASE_URL', 'TAGTRAIL_SECRET_KEYS']),
    );
    // A misspelt name would be ignored by the service without a word.
    for (const name of named) expect(SETTINGS, name).toContain(name);
    const config = loadConfig(set);
    expect(config.HOST).toBe('0.0.0.0');
    expect(config.PORT).toBe(8443);
  });
});

/** A command line as systemd passes it on: `$$` and `%%` are a literal `$` and `%`. */
const unescaped = (line: string) => line.replaceAll('$$', '$').replaceAll('%%', '%');

describe('the backup unit and its timer', () => {
  it.skipIf(!hasSystemdAnalyze)('pass systemd-analyze verify without a warning', () => {
    const verified = spawnSync('systemd-analyze', ['verify', BACKUP_UNIT, BACKUP_TIMER], {
      encoding: 'utf8',
    });
    expect(verified.stderr).toBe('');
    expect(verified.status).toBe(0);
  });

  it("back up the service's data directory, with its settings, at a low CPU weight, every night", async () => {
    const service = section(await readFile(UNIT, 'utf8'), 'Service');
    const backup = section(await readFile(BACKUP_UNIT, 'utf8'), 'Service');
    const timer = section(await readFile(BACKUP_TIMER, 'utf8'), 'Timer');
    expect(timer.get('Unit')).toEqual(['tagtrail-backup.service']);
    expect(timer.get('OnCalendar')).toEqual(['*-*-* 03:15:00']);
    expect(timer.get('Persistent')).toEqual(['true']);
    for (const key of ['User', 'Group', 'WorkingDirectory', 'Environment', 'EnvironmentFile']) {
      expect(backup.get(key), key).toEqual(service.get(key));
    }
    expect(backup.get('StateDirectory')).toEqual(['tagtrail tagtrail-backups']);
    expect(backup.get('Type')).toEqual(['oneshot']);
    expect(backup.get('CPUWeight')).toEqual(['10']);
  });

  it('run as systemd runs them: a dated archive of the data directory, and only old archives removed', async () => {
    const root = await mkdtemp(join(tmpdir(), 'tagtrail-backup-unit-'));
    // The embedded server runs as its own user when the tests run as root: it must reach in.
    await chmod(root, 0o755);
    try {
      await buildIfStale();
      const dataDir = join(root, 'data');
      const backups = join(root, 'backups');
      // No TAGTRAIL_SECRET_KEYS: the commands use the data directory's key file, as a deployment does.
      const env = childEnv({
        TAGTRAIL_DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        TAGTRAIL_SECRET_KEYS: undefined,
      });
      const created = await run(process.execPath, [MAIN, '--init', 'migrate', '--json'], env);
      expect(created.code, created.stderr).toBe(0);
      await mkdir(backups);

      const unit = section(await readFile(BACKUP_UNIT, 'utf8'), 'Service');
      const local = (line: string) =>
        unescaped(line)
          .replace('/usr/bin/node', process.execPath)
          .replace('/opt/tagtrail/dist/src/cli/main.js', MAIN)
          .replaceAll('/var/lib/tagtrail-backups', backups);
      // ExecStart is /bin/sh -c '<script>': the script, as the shell gets it.
      const start = /^\/bin\/sh -c '(.*)'$/.exec(local(unit.get('ExecStart')![0]!));
      expect(start).not.toBeNull();
      const started = await run('/bin/sh', ['-c', start![1]!], env);
      expect(started.code, started.stderr).toBe(0);
      const written = await readdir(backups);
      expect(written).toHaveLength(1);
      expect(written[0]).toMatch(/^tagtrail-\d{8}T\d{6}Z\.tar\.gz$/);

      // ExecStartPost, with an archive of 20 days ago beside it: that one goes, today's stays.
      const old = join(backups, 'tagtrail-20261101T031500Z.tar.gz');
      await writeFile(old, 'old');
      const twentyDaysAgo = new Date(Date.now() - 20 * 86_400_000);
      await utimes(old, twentyDaysAgo, twentyDaysAgo);
      await writeFile(join(backups, 'notes.txt'), 'not an archive');
      await utimes(join(backups, 'notes.txt'), twentyDaysAgo, twentyDaysAgo);
      // What a backup killed outright (power lost, SIGKILL) left two nights ago goes too; the
      // output of a backup running now (one started by hand) stays.
      const killed = join(backups, 'tagtrail-20261202T031500Z.tar.gz.partial');
      await writeFile(killed, 'half');
      const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
      await utimes(killed, twoDaysAgo, twoDaysAgo);
      const running = 'tagtrail-20261204T091500Z.tar.gz.partial';
      await writeFile(join(backups, running), 'being written');
      for (const line of unit.get('ExecStartPost')!) {
        const [program, ...args] = local(line).split(' ');
        const pruned = await run(program!, args, env);
        expect(pruned.code, pruned.stderr).toBe(0);
      }
      expect((await readdir(backups)).sort()).toEqual([...written, 'notes.txt', running].sort());
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 180_000);
});
