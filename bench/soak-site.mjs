/**
 * The site bench/soak.mjs runs against, made the way an integrator and an administrator
 * make one on a running service: the organization and its API key with the CLI, locations
 * and tagged assets through /api/v1/, readers, scan points and a webhook endpoint through
 * the web app's /internal/ API with a session from `tagtrail session token`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MAIN = new URL('../dist/src/cli/main.js', import.meta.url).pathname;

/** The EPC of asset number `a` (24 hex digits). */
export const epc = (a) => `E28011700000${a.toString(16).toUpperCase().padStart(12, '0')}`;

async function cli(env, args) {
  const { stdout } = await run(process.execPath, [MAIN, ...args, '--json'], { env });
  return JSON.parse(stdout);
}

async function call(url, { method = 'GET', headers = {}, body }) {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** At most `width` of `jobs` at once. */
async function inParallel(jobs, width) {
  const out = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]();
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return out;
}

/**
 * `readers` generic-json readers with `antennas` scan points each, one location per scan
 * point under a root; `assets` assets with one RFID tag each; a webhook endpoint at
 * `webhookUrl` for moves and asset changes; the locations and assets alone without
 * `devices` (the baseline's organization); `httpReaders` more readers that push over the
 * reader webhook, their zones after the MQTT readers' (`hooks`: their ids and secrets);
 * `topicPrefix` for the readers' topics, which are unique across organizations.
 * Returns what the load needs.
 */
export async function setUpSite({
  url,
  env,
  name,
  readers,
  antennas,
  assets,
  webhookUrl,
  devices = true,
  httpReaders = 0,
  topicPrefix = 'soak',
}) {
  const org = await cli(env, ['org', 'create', '--name', name]);
  const key = await cli(env, [
    'key',
    'mint',
    '--org',
    String(org.id),
    '--scopes',
    'assets:read,assets:write,locations:read,locations:write,tracking:read',
    '--name',
    'soak',
  ]);
  const session = await cli(env, ['session', 'token', '--org', String(org.id)]);
  const publicApi = (path, init = {}) =>
    call(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${key.token}` } });
  const internalApi = (path, init = {}) =>
    call(`${url}${path}`, {
      ...init,
      headers: { cookie: `tagtrail_session=${session.token}`, 'x-csrf-token': session.csrf_token },
    });

  const root = (
    await publicApi('/api/v1/locations', { method: 'POST', body: { external_key: 'SOAK', name: 'Site' } })
  ).data;
  const zones = await inParallel(
    Array.from(
      { length: (readers + httpReaders) * antennas },
      (_, z) => () =>
        publicApi('/api/v1/locations', {
          method: 'POST',
          body: { external_key: `DOOR-${z}`, name: `Door ${z}`, parent_id: root.id },
        }),
    ),
    4,
  );
  const assetIds = await inParallel(
    Array.from(
      { length: assets },
      (_, a) => async () =>
        (
          await publicApi('/api/v1/assets', {
            method: 'POST',
            body: {
              name: `Pallet ${a}`,
              external_key: `AB${a}`,
              tags: [{ tag_type: 'rfid', value: epc(a) }],
            },
          })
        ).data.id,
    ),
    8,
  );

  const logins = [];
  const hooks = [];
  if (!devices) return { orgId: org.id, token: key.token, root: root.id, assetIds, logins, hooks };
  for (let r = 0; r < readers + httpReaders; r++) {
    const http = r >= readers;
    const created = await internalApi('/internal/readers', {
      method: 'POST',
      body: {
        family: 'generic-json',
        identity: `soak-reader-${r}`,
        name: `Dock ${r}`,
        topic: `${topicPrefix}/reader-${r}`,
        webhook: http,
      },
    });
    for (let antenna = 1; antenna <= antennas; antenna++) {
      await internalApi(`/internal/readers/${created.data.id}/scan-points`, {
        method: 'POST',
        body: { antenna, location_id: zones[r * antennas + antenna - 1].data.id },
      });
    }
    if (http) {
      hooks.push({ id: created.data.id, secret: created.webhook_secret });
      continue;
    }
    logins.push({
      topic: `${topicPrefix}/reader-${r}`,
      username: created.data.mqtt_username,
      password: created.mqtt_password,
    });
  }
  await internalApi('/internal/webhooks', {
    method: 'POST',
    body: { url: webhookUrl, event_types: ['asset.moved', 'asset.created', 'asset.updated'] },
  });
  return { orgId: org.id, token: key.token, root: root.id, assetIds, logins, hooks };
}
