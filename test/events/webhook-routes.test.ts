/**
 * /internal/webhooks (docs/events.md): administrators register endpoints, the secret is
 * shown once, private and loopback URLs are refused unless the operator allows them, and
 * the delivery log and redelivery work through the routes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendWebhook } from '../../src/events/sender.js';
import {
  isPrivateAddress,
  resolveDeliveryAddress,
  savedUrlProblem,
  urlProblem,
} from '../../src/events/url-guard.js';
import {
  type Browser,
  buildInternalApp,
  expectInternalError,
  type InternalTestApp,
} from '../internal/helpers.js';
import { startReceiver } from './receiver.js';

describe('request forgery guard', () => {
  it('refuses loopback, private, link-local and other special addresses; allows public ones', () => {
    for (const a of [
      '127.0.0.1',
      '127.8.9.10',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::127.0.0.1',
      '::a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::a9fe:a9fe',
      '64:ff9b:1:ffff::a00:1',
      'fec0::1',
      // SIIT, 6to4 around a private IPv4 address, Teredo.
      '::ffff:0:127.0.0.1',
      '::ffff:0:a9fe:a9fe',
      '2002:7f00:1::1',
      '2002:a00:1::',
      '2002:a9fe:a9fe::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      // Elsewhere in the reserved 0000::/8, and mapped in hexadecimal.
      '::ffff:0:0:7f00:1',
      '::1:0:0:1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      // Past NAT64's prefixes but still in 0000::/8: not allocated, reaches nothing.
      '64:ff9b:2::1',
      // Outside global unicast (2000::/3): not allocated.
      '1::1',
      '4000::1',
    ]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of [
      '8.8.8.8',
      '172.32.0.1',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '2002:808:808::1',
      '2001:4860:4860::8888',
      '::ffff:808:808',
      '::ffff:8.8.8.8',
    ]) {
      expect(isPrivateAddress(a), a).toBe(false);
    }
  });

  it('URLs: https only, no loopback/private literal or local name, by default; the operator may allow them', () => {
    expect(urlProblem('https://hooks.example.com/x', false)).toBeNull();
    expect(urlProblem('http://hooks.example.com/x', false)).toBe('must be an https URL');
    expect(urlProblem('https://127.0.0.1/x', false)).toMatch(/loopback or private/);
    expect(urlProblem('https://[::1]/x', false)).toMatch(/loopback or private/);
    expect(urlProblem('https://[fd00::8]/x', false)).toMatch(/loopback or private/);
    expect(urlProblem('https://[::127.0.0.1]/x', false)).toMatch(/loopback or private/);
    expect(urlProblem('https://[64:ff9b:1::169.254.169.254]/x', false)).toMatch(/loopback or private/);
    expect(urlProblem('https://[2606:4700:4700::1111]/x', false)).toBeNull();
    expect(urlProblem('https://93.184.216.34/x', false)).toBeNull();
    expect(urlProblem('https://10.0.0.8/x', false)).toMatch(/loopback or private/);
    expect(urlProblem('https://localhost/x', false)).toMatch(/loopback or private/);
    expect(urlProblem('https://intranet/x', false)).toMatch(/loopback or private/);
    expect(urlProblem('https://user:pw@hooks.example.com/', false)).toMatch(/user name or password/);
    expect(urlProblem('not a url', false)).toBe('must be an absolute URL');
    expect(urlProblem('ftp://hooks.example.com/', true)).toBe('must be an http or https URL');
    expect(urlProblem('http://127.0.0.1:9/x', true)).toBeNull();
  });

  it("a name's final dot names the same host: localhost. is refused like localhost", () => {
    for (const url of ['https://localhost./x', 'https://api.localhost./x', 'https://intranet./x']) {
      expect(urlProblem(url, false), url).toMatch(/loopback or private/);
    }
    expect(urlProblem('https://hooks.example.com./x', false)).toBeNull();
  });

  it('when saved, a name is refused if it resolves to a private address now; one that does not resolve is accepted', async () => {
    const hosts: Record<string, string[]> = {
      'metadata.example.test': ['169.254.169.254'],
      'mixed.example.test': ['93.184.216.34', '10.1.2.3'],
      'public.example.test': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    };
    const asked: string[] = [];
    const resolve = async (host: string) => {
      asked.push(host);
      const found = hosts[host];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return found;
    };
    expect(await savedUrlProblem('https://metadata.example.test/x', false, resolve)).toMatch(
      /loopback or private address \(metadata\.example\.test resolves to 169\.254\.169\.254\)/,
    );
    expect(await savedUrlProblem('https://mixed.example.test./x', false, resolve)).toMatch(/10\.1\.2\.3/);
    expect(await savedUrlProblem('https://public.example.test/x', false, resolve)).toBeNull();
    expect(await savedUrlProblem('https://later.example.test/x', false, resolve)).toBeNull();
    const never = () => new Promise<string[]>(() => undefined);
    expect(await savedUrlProblem('https://slow.example.test/x', false, never, 50)).toBeNull();
    // Allowed private addresses and literal public ones need no lookup.
    asked.length = 0;
    expect(await savedUrlProblem('https://metadata.example.test/x', true, resolve)).toBeNull();
    expect(await savedUrlProblem('https://93.184.216.34/x', false, resolve)).toBeNull();
    expect(asked).toEqual([]);
  });

  it('at delivery time the resolved address is checked: a name resolving to loopback is refused', async () => {
    await expect(resolveDeliveryAddress('localhost', false)).rejects.toThrow(/loopback or private/);
    await expect(resolveDeliveryAddress('127.0.0.1', false)).rejects.toThrow(/loopback or private/);
    expect((await resolveDeliveryAddress('localhost', true)).address).toMatch(/^(127\.0\.0\.1|::1)$/);
  });

  it('a delivery to a loopback receiver is refused without connecting unless allowed', async () => {
    const rx = await startReceiver();
    try {
      const refused = await sendWebhook(rx.url, '{}', {}, { timeoutMs: 2000, allowPrivate: false });
      expect(refused).toMatchObject({ ok: false, status: null });
      expect(refused.error).toMatch(/loopback or private/);
      expect(rx.received).toHaveLength(0);
      const allowed = await sendWebhook(rx.url, '{}', {}, { timeoutMs: 2000, allowPrivate: true });
      expect(allowed).toMatchObject({ ok: true, status: 204 });
    } finally {
      await rx.close();
    }
  });
});

describe('/internal/webhooks', () => {
  let t: InternalTestApp;
  let admin: Browser;
  beforeAll(async () => {
    t = await buildInternalApp();
    admin = await t.signUp();
  });
  afterAll(() => t?.close());

  const patch = (b: Browser, url: string, body: unknown) =>
    b.request({
      method: 'PATCH',
      url,
      payload: JSON.stringify(body),
      headers: { 'content-type': 'application/merge-patch+json' },
    });

  it('creates an endpoint, shows the whsec_ secret once, lists it without the secret', async () => {
    const res = await admin.post('/internal/webhooks', {
      url: 'https://hooks.example.com/tagtrail',
      event_types: ['asset.moved', 'asset.first_seen'],
    });
    expect(res.statusCode, res.body).toBe(201);
    const { data, secret } = res.json();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(data).toMatchObject({
      url: 'https://hooks.example.com/tagtrail',
      event_types: ['asset.moved', 'asset.first_seen'],
      location_id: null,
      enabled: true,
      pending_deliveries: 0,
    });
    const list = await admin.get('/internal/webhooks');
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toEqual([data]);
    expect(list.body).not.toContain(secret);
  });

  it('refuses a loopback or private URL by default with validation_error on url', async () => {
    for (const url of [
      'https://127.0.0.1/x',
      'https://192.168.0.10/x',
      'http://hooks.example.com/x',
      'https://localhost./hook',
    ]) {
      const res = await admin.post('/internal/webhooks', { url, event_types: ['asset.moved'] });
      expectInternalError(res, { status: 400, type: 'validation_error' });
      expect(res.json().error.fields[0]).toMatchObject({ field: 'url', code: 'invalid_value' });
    }
  });

  it('refuses unknown event types and an unknown location', async () => {
    const bad = await admin.post('/internal/webhooks', {
      url: 'https://a.example.com/',
      event_types: ['asset.eaten'],
    });
    expectInternalError(bad, { status: 400, type: 'validation_error' });
    const nowhere = await admin.post('/internal/webhooks', {
      url: 'https://a.example.com/',
      event_types: ['asset.moved'],
      location_id: 999999,
    });
    expectInternalError(nowhere, { status: 400, type: 'validation_error' });
    expect(nowhere.json().error.fields[0]).toMatchObject({ field: 'location_id', code: 'fk_not_found' });
  });

  it('disables and enables, changes types; deletes', async () => {
    const created = (
      await admin.post('/internal/webhooks', { url: 'https://b.example.com/', event_types: ['tag.attached'] })
    ).json().data;
    const off = await patch(admin, `/internal/webhooks/${created.id}`, { enabled: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().data).toMatchObject({ enabled: false, disabled_reason: null });
    const on = await patch(admin, `/internal/webhooks/${created.id}`, {
      enabled: true,
      event_types: ['tag.detached'],
    });
    expect(on.json().data).toMatchObject({ enabled: true, event_types: ['tag.detached'] });
    expect((await admin.del(`/internal/webhooks/${created.id}`)).statusCode).toBe(204);
    expectInternalError(await admin.del(`/internal/webhooks/${created.id}`), {
      status: 404,
      type: 'not_found',
    });
  });

  it('the delivery log and a redelivery, through the routes', async () => {
    const me = await t.signUp();
    const rx = await startReceiver();
    try {
      // The operator's allowance is what lets a test receiver on loopback in.
      await t.database.db.pool.query(
        `INSERT INTO webhook_endpoints (org_id, url, event_types, secret) VALUES ($1, $2, '{location.created}', 'whsec_AAAA')`,
        [me.orgId, rx.url],
      );
      const endpoint = (await me.get('/internal/webhooks')).json().data[0];
      await me.post('/internal/locations', { name: 'Dock' });
      const { dispatchEvents } = await import('../../src/events/dispatcher.js');
      await dispatchEvents(t.database.db);
      const log = await me.get(`/internal/webhooks/${endpoint.id}/deliveries`);
      expect(log.statusCode, log.body).toBe(200);
      expect(log.json()).toMatchObject({
        total_count: 1,
        data: [{ event_type: 'location.created', state: 'pending', attempts: 0 }],
      });
      const deliveryId = log.json().data[0].id;
      const again = await me.post(`/internal/webhooks/${endpoint.id}/deliveries/${deliveryId}/redeliver`);
      expect(again.statusCode, again.body).toBe(200);
      expect(again.json().data).toMatchObject({ id: deliveryId, state: 'pending' });
      expectInternalError(await me.post(`/internal/webhooks/${endpoint.id}/deliveries/999999/redeliver`), {
        status: 404,
        type: 'not_found',
      });
      // Another organization's endpoint and delivery are not found.
      expectInternalError(await admin.get(`/internal/webhooks/${endpoint.id}/deliveries`), {
        status: 404,
        type: 'not_found',
      });
      expectInternalError(
        await admin.post(`/internal/webhooks/${endpoint.id}/deliveries/${deliveryId}/redeliver`),
        {
          status: 404,
          type: 'not_found',
        },
      );
    } finally {
      await rx.close();
    }
  });
});
