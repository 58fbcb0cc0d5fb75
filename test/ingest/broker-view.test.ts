/**
 * GET /internal/broker with the embedded broker on every interface (docs/operations.md
 * "Public address"): the readers page names the broker by TAGTRAIL_PUBLIC_URL's host when it
 * is set, since behind a proxy the Host header may be a name only the proxy knows; unset, by
 * the host the page was reached at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildServer } from '../../src/app.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import type { BrokerAddress } from '../../src/ingest/broker-port.js';
import { createServices, type Services } from '../../src/services.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { TEST_SECRETS } from '../helpers/secrets.js';

const WILDCARD: BrokerAddress = {
  url: 'mqtt://0.0.0.0:1884',
  tlsUrl: 'mqtts://0.0.0.0:8884',
  embedded: true,
};
/** The name the proxy forwards to: what the Host header says behind it. */
const INTERNAL_HOST = 'tagtrail-app.internal:8080';

let database: TestDatabase;
const opened: { app: App; services: Services }[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  for (const { app, services } of opened) {
    await app.close();
    await services.close();
  }
  await database?.drop();
});

/** A server over the shared database with `broker` and TAGTRAIL_PUBLIC_URL; its GET /internal/broker. */
async function brokerPage(broker: BrokerAddress, publicUrl: string | undefined) {
  const services = await createServices(
    database.db,
    {
      TAGTRAIL_ENV: 'production',
      secrets: TEST_SECRETS,
      REDIS_URL: undefined,
      TAGTRAIL_RATE_LIMIT: 1000,
      TAGTRAIL_RATE_WINDOW_SECONDS: 60,
      TAGTRAIL_PUBLIC_URL: publicUrl,
      broker,
    },
    new MemoryRateLimitStore({ limit: 1000, windowSeconds: 60 }),
  );
  const app = await buildServer(services, { bodyLimit: 1048576 });
  opened.push({ app, services });
  await app.ready();
  const org = await services.organizations.create('Broker View Org');
  const user = await services.internal.accounts.operatorUser(org.id);
  const session = await services.internal.sessions.create(org.id, user.id);
  const res = await app.inject({
    method: 'GET',
    url: '/internal/broker',
    headers: { host: INTERNAL_HOST, cookie: `tagtrail_session=${session.token}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

describe('GET /internal/broker, embedded broker on every interface', () => {
  it('names it by TAGTRAIL_PUBLIC_URL’s host when set, not by the Host header', async () => {
    expect(await brokerPage(WILDCARD, 'https://tagtrail.example.com')).toEqual({
      url: 'mqtt://tagtrail.example.com:1884',
      host: 'tagtrail.example.com',
      port: 1884,
      embedded: true,
      tls: { url: 'mqtts://tagtrail.example.com:8884', host: 'tagtrail.example.com', port: 8884 },
    });
  });

  it('takes an IPv6 public address in brackets in the URL and bare as the host', async () => {
    expect(await brokerPage(WILDCARD, 'http://[2001:db8::5]:8080')).toMatchObject({
      url: 'mqtt://[2001:db8::5]:1884',
      host: '2001:db8::5',
      port: 1884,
    });
  });

  it('names it by the host the page was reached at when TAGTRAIL_PUBLIC_URL is unset', async () => {
    expect(await brokerPage(WILDCARD, undefined)).toEqual({
      url: 'mqtt://tagtrail-app.internal:1884',
      host: 'tagtrail-app.internal',
      port: 1884,
      embedded: true,
      tls: { url: 'mqtts://tagtrail-app.internal:8884', host: 'tagtrail-app.internal', port: 8884 },
    });
  });

  it('leaves a broker bound to one address, and MQTT_URL, as they are', async () => {
    const bound = await brokerPage(
      { url: 'mqtt://192.0.2.7:1884', embedded: true },
      'https://tagtrail.example.com',
    );
    expect(bound).toMatchObject({ url: 'mqtt://192.0.2.7:1884', host: '192.0.2.7' });
    const external = await brokerPage(
      { url: 'mqtts://0.0.0.0:8883', embedded: false },
      'https://tagtrail.example.com',
    );
    expect(external).toMatchObject({ url: 'mqtts://0.0.0.0:8883', host: '0.0.0.0', embedded: false });
  });
});
