/**
 * deploy/systemd/tagtrail.service: systemd reads it without a complaint, and what it
 * promises matches the service (the data directory it makes writable is the one the
 * service is told to use; reload is the SIGHUP that takes renewed certificates; the env
 * file names only settings the service knows).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, SETTINGS } from '../../src/config.js';
import { MAIN, ROOT } from '../helpers/compiled.js';

const UNIT = join(ROOT, 'deploy/systemd/tagtrail.service');
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
