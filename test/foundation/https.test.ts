/**
 * HTTPS on the API's port (TAGTRAIL_TLS_CERT/KEY): the API and the web app's back end over
 * TLS, Strict-Transport-Security, the session cookie marked Secure, no clear text on the
 * port, the handshake bounded like the headers, and renewed certificates served without a
 * restart (reloadTls, which SIGHUP and a check every minute call).
 */
import { X509Certificate } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { RunningService } from '../../src/runtime.js';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { Scrape } from '../helpers/prometheus.js';
import { startTestService } from '../helpers/service.js';
import {
  type CertificateFiles,
  fingerprintOf,
  selfSignedCertificate,
  servedFingerprint,
} from '../helpers/tls-certs.js';

let dir: string;
let files: CertificateFiles;
let t: TestApp;
let running: RunningService;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request over HTTPS on a connection of its own, trusting `ca` (the self-signed certificate). */
async function fetchTls(
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; ca?: Buffer } = {},
): Promise<Answer> {
  const ca = options.ca ?? (await readFile(files.cert));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, running.url),
      { method: options.method ?? 'GET', headers: options.headers, ca, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.once('error', reject);
    req.end(options.body);
  });
}

const port = () => Number(new URL(running.url).port);
const METRICS_TOKEN = 'https-test-metrics-token';

/** When the certificate the https listener serves ends, as /metrics says. */
async function expiryOnMetrics(): Promise<number> {
  const res = await fetchTls('/metrics', { headers: bearer(METRICS_TOKEN) });
  expect(res.status).toBe(200);
  const scrape = await Scrape.parse(res.body);
  expect(scrape.type('tagtrail_tls_certificate_expiry_timestamp_seconds')).toBe('gauge');
  return scrape.value('tagtrail_tls_certificate_expiry_timestamp_seconds', { listener: 'https' });
}

const notAfterOf = async (certFile: string) => new X509Certificate(await readFile(certFile)).validTo;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tagtrail-https-'));
  files = selfSignedCertificate(dir, 'first');
  t = await buildTestApp();
  running = await startTestService({
    TAGTRAIL_TLS_CERT: files.cert,
    TAGTRAIL_TLS_KEY: files.key,
    TAGTRAIL_HEADERS_TIMEOUT_SECONDS: '1',
    TAGTRAIL_SIGNUP: 'open',
    TAGTRAIL_METRICS_TOKEN: METRICS_TOKEN,
    DATABASE_URL: t.database.url,
  });
});
afterAll(async () => {
  await running?.stop();
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('HTTPS on the API port', () => {
  it('serves the API over TLS, with Strict-Transport-Security on every answer', async () => {
    expect(running.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const org = await t.createOrg();
    const { token } = await org.key();
    const me = await fetchTls('/api/v1/orgs/me', { headers: bearer(token) });
    expect(me.status, me.body).toBe(200);
    expect(JSON.parse(me.body).data.id).toBe(org.id);
    expect(me.headers['strict-transport-security']).toBe('max-age=31536000');

    const refused = await fetchTls('/api/v1/orgs/me');
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body).error.type).toBe('unauthorized');
    expect(refused.headers['strict-transport-security']).toBe('max-age=31536000');
    const health = await fetchTls('/healthz');
    expect(health.status).toBe(200);
    expect(health.headers['strict-transport-security']).toBe('max-age=31536000');
  });

  it("keeps plain HTTP's header bound: 20 KiB of headers pass (Node's own bound is 16), 40 KiB are a 431", async () => {
    const fits = await fetchTls('/healthz', { headers: { 'x-padding': 'a'.repeat(20 * 1024) } });
    expect(fits.status).toBe(200);
    const res = await fetchTls('/healthz', { headers: { 'x-padding': 'a'.repeat(40 * 1024) } });
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body).error.type).toBe('header_fields_too_large');
  });

  it('refuses a client that does not trust the certificate', async () => {
    const untrusted = await fetchTls('/healthz', { ca: Buffer.from('') }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(untrusted?.message).toMatch(/self[- ]signed/i);
  });

  it('marks the web session cookie Secure, and builds its links with https', async () => {
    const res = await fetchTls('/internal/auth/sign-up', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: `tls-${Date.now()}@example.com`,
        password: 'long enough',
        organization_name: 'T',
      }),
    });
    expect(res.status, res.body).toBe(201);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie.split('; ')).toContain('Secure');
    expect(res.headers['strict-transport-security']).toBe('max-age=31536000');
  });

  it('answers nothing in clear text on the TLS port', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port: port(), path: '/healthz', agent: false }, (res) =>
        resolve(`answered ${res.statusCode}`),
      );
      req.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      req.setTimeout(10_000, () => req.destroy(new Error('no answer')));
      req.end();
    });
    expect(outcome).not.toMatch(/^answered 2/);
  });

  it('closes a connection whose handshake does not come within the headers timeout', async () => {
    const closed = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: port() });
      const guard = setTimeout(() => {
        socket.destroy();
        resolve(false);
      }, 15_000);
      socket.once('close', () => {
        clearTimeout(guard);
        resolve(true);
      });
      socket.on('error', () => undefined);
    });
    expect(closed).toBe(true);
  });
});

describe('renewing the certificate', () => {
  it('serves the renewed pair to new connections, refuses a broken one, and keeps serving', async () => {
    expect(await servedFingerprint(port())).toBe(fingerprintOf(files.cert));
    expect(await expiryOnMetrics()).toBe(Date.parse(await notAfterOf(files.cert)) / 1000);
    expect(running.reloadTls()).toEqual([{ listener: 'https', outcome: 'unchanged' }]);

    // Renewed in place, as certbot or a mounted secret does.
    selfSignedCertificate(dir, 'second', files);
    expect(running.reloadTls()).toEqual([{ listener: 'https', outcome: 'reloaded' }]);
    const renewed = fingerprintOf(files.cert);
    expect(await servedFingerprint(port())).toBe(renewed);
    expect((await fetchTls('/healthz')).status).toBe(200);

    // A key that does not match (half a renewal): refused, the renewed pair stays.
    const other = selfSignedCertificate(dir, 'other');
    await copyFile(other.key, files.key);
    const [refused] = running.reloadTls();
    expect(refused).toMatchObject({ listener: 'https', outcome: 'refused' });
    expect(refused && 'error' in refused ? refused.error : '').toMatch(/TAGTRAIL_TLS_CERT\/TAGTRAIL_TLS_KEY/);
    expect(await servedFingerprint(port())).toBe(renewed);
    expect((await fetchTls('/healthz')).status).toBe(200);
    await writeFile(files.cert, await readFile(other.cert));
    expect(running.reloadTls()).toEqual([{ listener: 'https', outcome: 'reloaded' }]);
    expect(await servedFingerprint(port())).toBe(fingerprintOf(other.cert));
    expect(await expiryOnMetrics()).toBe(Date.parse(await notAfterOf(other.cert)) / 1000);
  });
});

describe('the HTTPS settings', () => {
  it('are both or neither, and must be a readable PEM certificate and the key that goes with it', async () => {
    const a = selfSignedCertificate(dir, 'a');
    const b = selfSignedCertificate(dir, 'b');
    expect(() => loadConfig({ TAGTRAIL_TLS_KEY: a.key })).toThrow(
      /TAGTRAIL_TLS_CERT and TAGTRAIL_TLS_KEY must be set together/,
    );
    expect(() => loadConfig({ TAGTRAIL_TLS_CERT: a.cert, TAGTRAIL_TLS_KEY: join(dir, 'none.pem') })).toThrow(
      /TAGTRAIL_TLS_KEY: cannot read/,
    );
    expect(() => loadConfig({ TAGTRAIL_TLS_CERT: a.cert, TAGTRAIL_TLS_KEY: b.key })).toThrow(ConfigError);
    expect(() => loadConfig({ TAGTRAIL_TLS_CERT: a.cert, TAGTRAIL_TLS_KEY: b.key })).toThrow(
      /TAGTRAIL_TLS_CERT\/TAGTRAIL_TLS_KEY: not a PEM certificate and its key/,
    );
    const config = loadConfig({ TAGTRAIL_TLS_CERT: a.cert, TAGTRAIL_TLS_KEY: a.key });
    expect(config.httpTls?.cert.equals(await readFile(a.cert))).toBe(true);
    expect(config.mqttTls).toBeUndefined();
  });
});
