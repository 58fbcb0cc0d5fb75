/**
 * CertificateReloader on its own: what it applies, what it refuses, how often it says so,
 * and the check it runs by itself.
 */
import { X509Certificate } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CertificateReloader, type TlsListener } from '../../src/tls/reloader.js';
import type { TlsPair } from '../../src/tls/tls-files.js';
import { type CertificateFiles, selfSignedCertificate } from '../helpers/tls-certs.js';

let dir: string;
let first: CertificateFiles;
let second: CertificateFiles;
let lasting: CertificateFiles;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tagtrail-reloader-'));
  first = selfSignedCertificate(dir, 'first');
  second = selfSignedCertificate(dir, 'second');
  lasting = selfSignedCertificate(dir, 'lasting', undefined, 90);
});
afterAll(() => rm(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.useRealTimers();
});

async function listenerOn(
  name: string,
): Promise<{ listener: TlsListener; applied: TlsPair[]; files: CertificateFiles }> {
  const files = { cert: join(dir, `${name}.cert.pem`), key: join(dir, `${name}.key.pem`) };
  await copyFile(first.cert, files.cert);
  await copyFile(first.key, files.key);
  const applied: TlsPair[] = [];
  const listener: TlsListener = {
    name,
    files: { certVar: 'CERT', keyVar: 'KEY', certFile: files.cert, keyFile: files.key },
    current: { cert: await readFile(first.cert), key: await readFile(first.key) },
    apply: (pair) => applied.push(pair),
  };
  return { listener, applied, files };
}

function recordingLog() {
  const lines: Array<{ level: string; fields: object; message: string }> = [];
  return {
    lines,
    info: (fields: object, message: string) => lines.push({ level: 'info', fields, message }),
    warn: (fields: object, message: string) => lines.push({ level: 'warn', fields, message }),
  };
}

describe('CertificateReloader', () => {
  it('applies a changed pair once, and logs what it now serves', async () => {
    const { listener, applied, files } = await listenerOn('apply');
    const log = recordingLog();
    const reloader = new CertificateReloader([listener], log);
    expect(reloader.reload()).toEqual([{ listener: 'apply', outcome: 'unchanged' }]);
    await copyFile(lasting.cert, files.cert);
    await copyFile(lasting.key, files.key);
    expect(reloader.reload()).toEqual([{ listener: 'apply', outcome: 'reloaded' }]);
    expect(reloader.reload()).toEqual([{ listener: 'apply', outcome: 'unchanged' }]);
    expect(applied.map((p) => p.cert.equals(listener.current.cert))).toEqual([true]);
    expect(listener.current.cert.equals(await readFile(lasting.cert))).toBe(true);
    expect(reloader.served()).toEqual([
      { listener: 'apply', notAfter: new Date(new X509Certificate(await readFile(lasting.cert)).validTo) },
    ]);
    expect(log.lines).toEqual([
      {
        level: 'info',
        fields: expect.objectContaining({
          listener: 'apply',
          subject: 'CN=lasting',
          names: 'DNS:localhost, IP Address:127.0.0.1',
          expires_in_days: 89,
        }),
        message: 'TLS certificate reloaded',
      },
    ]);
  });

  it('warns when the certificate a renewal brought expires within 14 days, as a start does', async () => {
    const { listener, files } = await listenerOn('soon');
    const log = recordingLog();
    const reloader = new CertificateReloader([listener], log);
    await copyFile(second.cert, files.cert);
    await copyFile(second.key, files.key);
    expect(reloader.reload()).toEqual([{ listener: 'soon', outcome: 'reloaded' }]);
    expect(log.lines).toEqual([
      {
        level: 'warn',
        fields: expect.objectContaining({ listener: 'soon', subject: 'CN=second', expires_in_days: 0 }),
        message: 'TLS certificate reloaded; it expires soon: renew it',
      },
    ]);
  });

  it('says a certificate a renewal brought has expired, not that it expires soon, once past its end', async () => {
    const { listener, files } = await listenerOn('expired');
    const log = recordingLog();
    const reloader = new CertificateReloader([listener], log);
    await copyFile(second.cert, files.cert);
    await copyFile(second.key, files.key);
    const end = new X509Certificate(await readFile(second.cert)).validTo;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(end).getTime() + 60_000);
    expect(reloader.reload()).toEqual([{ listener: 'expired', outcome: 'reloaded' }]);
    expect(log.lines).toEqual([
      {
        level: 'warn',
        fields: expect.objectContaining({ listener: 'expired', subject: 'CN=second', expires_in_days: -1 }),
        message: 'TLS certificate reloaded; it has expired: renew it',
      },
    ]);
  });

  it('refuses a pair that does not match, saying so once per content, and applies the mended one', async () => {
    const { listener, applied, files } = await listenerOn('refuse');
    const log = recordingLog();
    const reloader = new CertificateReloader([listener], log);
    await copyFile(second.cert, files.cert); // the certificate renewed, its key not yet
    for (let i = 0; i < 3; i++) expect(reloader.reload()[0]).toMatchObject({ outcome: 'refused' });
    expect(applied).toEqual([]);
    expect(log.lines.map((l) => [l.level, l.message])).toEqual([
      ['warn', 'TLS certificate not reloaded; the one in use stays'],
    ]);
    await rm(files.key);
    expect(reloader.reload()[0]).toMatchObject({
      outcome: 'refused',
      error: expect.stringMatching(/KEY: cannot read/),
    });
    expect(log.lines).toHaveLength(2);
    await copyFile(second.key, files.key);
    expect(reloader.reload()).toEqual([{ listener: 'refuse', outcome: 'reloaded' }]);
    expect(applied).toHaveLength(1);
  });

  it('takes a listener that will not accept the pair as a refusal, keeping the pair it serves', async () => {
    const { listener, files } = await listenerOn('apply-fails');
    const before = listener.current;
    listener.apply = () => {
      throw new Error('the server is closing');
    };
    const log = recordingLog();
    const reloader = new CertificateReloader([listener], log);
    await copyFile(second.cert, files.cert);
    await copyFile(second.key, files.key);
    expect(reloader.reload()).toEqual([
      { listener: 'apply-fails', outcome: 'refused', error: 'the server is closing' },
    ]);
    expect(listener.current).toBe(before);
    expect(log.lines.map((l) => l.level)).toEqual(['warn']);
  });

  it('checks by itself at its interval once started, and not after it is stopped', async () => {
    vi.useFakeTimers();
    const { listener, applied, files } = await listenerOn('timer');
    const reloader = new CertificateReloader([listener], recordingLog(), 1_000);
    reloader.start();
    await copyFile(second.cert, files.cert);
    await copyFile(second.key, files.key);
    expect(applied).toHaveLength(0);
    vi.advanceTimersByTime(1_000);
    expect(applied).toHaveLength(1);
    reloader.stop();
    await copyFile(first.cert, files.cert);
    await copyFile(first.key, files.key);
    vi.advanceTimersByTime(5_000);
    expect(applied).toHaveLength(1);
  });

  it('without listeners it is inactive and never starts a timer', () => {
    vi.useFakeTimers();
    const reloader = new CertificateReloader([], recordingLog(), 1_000);
    expect(reloader.active).toBe(false);
    reloader.start();
    expect(vi.getTimerCount()).toBe(0);
    expect(reloader.reload()).toEqual([]);
  });
});
