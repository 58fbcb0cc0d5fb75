/**
 * The baseline of bench/api.mjs: bare Fastify + `pg` answering the benchmark's requests by
 * calling the same services (hence the same SQL and row mapping) with no auth, no rate
 * limit, no validation, no transaction around reads and no row-level security.
 */
import Fastify from 'fastify';
import pg from 'pg';
import { OrganizationService } from '../dist/src/accounts/service.js';
import { AssetService } from '../dist/src/assets/service.js';
import { API_PENDING_LIST_LIMIT } from '../dist/src/db/app-connection.js';
import { LocationService } from '../dist/src/locations/service.js';
import { TrackingService } from '../dist/src/tracking/service.js';

/**
 * The services send a transaction's statements without waiting for each answer (the
 * service's own connections pipeline them, src/db/opening.ts). A plain `pg` client queues
 * a statement sent while one runs, which pg deprecates (a warning, and gone in pg@9):
 * the baseline queues them itself, as the client did.
 */
function oneAtATime(client) {
  let last = Promise.resolve();
  const query = (...args) => {
    const run = last.then(() => client.query(...args));
    last = run.catch(() => undefined);
    return run;
  };
  return new Proxy(client, {
    get: (target, prop) => (prop === 'query' ? query : Reflect.get(target, prop)),
  });
}

/**
 * A pool of bare connections. The views read the organization from a setting: set it for
 * the session, once. The trigram indexes' pending lists are kept as short as on the
 * service's connections: the same database settings, so the comparison is of the request
 * path alone. `generic` makes every plan generic, as the service's reads that ask for it.
 */
function barePool(url, orgId, max, generic) {
  const settings = [`-c tagtrail.org_id=${orgId}`, `-c gin_pending_list_limit=${API_PENDING_LIST_LIMIT}`];
  if (generic) settings.push('-c plan_cache_mode=force_generic_plan');
  const pool = new pg.Pool({ connectionString: url, max, options: settings.join(' ') });
  // The bench drops its database WITH (FORCE) at the end: a terminated idle connection is no crash.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * The Database interface with nothing around the work: no role, no organization
 * transaction. The reads the service plans generically (ReadOptions.genericPlans and the
 * implicit reads of Database.readNamed, which set plan_cache_mode in their transaction)
 * run on connections whose session has that setting, so both sides plan the same
 * statements the same way and the ratio is of the request path alone.
 */
function bareDatabase(url, orgId, { transactional, max }) {
  const pool = barePool(url, orgId, max, false);
  const genericPool = transactional ? undefined : barePool(url, orgId, max, true);
  const inClient = async (fn, generic = false) => {
    const pooled = await (generic ? genericPool : pool).connect();
    const client = oneAtATime(pooled);
    try {
      if (!transactional) return await fn(client);
      await client.query('BEGIN');
      try {
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    } finally {
      pooled.release();
    }
  };
  return {
    pool,
    // What the services size by (AssetService's keyless creates in flight).
    appPool: pool,
    withOrg: (_org, fn) => inClient(fn),
    readWithOrg: (_org, fn, options = {}) => inClient(fn, options.genericPlans === true),
    readOne: (_org, text, values) => pool.query(text, values),
    readNamed: (_org, reads) => inClient((client) => Promise.all(reads.map((r) => client.query(r))), true),
    system: inClient,
    close: async () => {
      await pool.end();
      await genericPool?.end();
    },
  };
}

const ARRAYS = new Set([
  'location_id',
  'location_external_key',
  'external_key',
  'asset_id',
  'asset_external_key',
]);
const NUMBERS = new Set(['location_id', 'asset_id', 'limit', 'offset']);

/** What the route schemas make of a query string, for the few parameters the cases use. */
function parseQuery(query) {
  const out = { limit: 50, offset: 0, include_deleted: false };
  for (const [key, raw] of Object.entries(query)) {
    const values = (Array.isArray(raw) ? raw : [raw]).map((v) =>
      NUMBERS.has(key) ? Number(v) : v === 'true' ? true : v === 'false' ? false : v,
    );
    out[key] = ARRAYS.has(key) ? values : values[0];
  }
  return out;
}

export async function baselineApp(url, orgId, { pool }) {
  const reads = bareDatabase(url, orgId, { transactional: false, max: pool });
  const writes = bareDatabase(url, orgId, { transactional: true, max: pool });
  const orgs = new OrganizationService(reads);
  const assets = new AssetService(reads);
  const assetWrites = new AssetService(writes);
  // Writes name who made them (the activity log); the baseline's caller is a fixed one.
  const caller = { orgId, actor: { type: 'cli', name: 'bench' } };
  const locations = new LocationService(reads);
  const tracking = new TrackingService(reads);
  const app = Fastify();
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body));
    } catch (err) {
      done(err);
    }
  });
  app.get('/api/v1/orgs/me', async () => {
    const org = await orgs.get(orgId);
    return { data: { id: org.id, name: org.name, scopes: ['assets:read'], api_key_id: 'bench' } };
  });
  app.get('/api/v1/assets/:id', async (req) => ({ data: await assets.get(orgId, Number(req.params.id)) }));
  app.get('/api/v1/assets', (req) => assets.list(orgId, parseQuery(req.query)));
  app.get('/api/v1/locations', (req) => locations.list(orgId, parseQuery(req.query)));
  app.get('/api/v1/locations/:id/descendants', (req) =>
    locations.descendants(orgId, Number(req.params.id), parseQuery(req.query)),
  );
  app.get('/api/v1/reports/asset-locations', (req) => tracking.report(orgId, parseQuery(req.query)));
  app.get('/api/v1/assets/:id/history', (req) =>
    tracking.history(orgId, Number(req.params.id), parseQuery(req.query)),
  );
  app.post('/api/v1/assets', async (req, reply) => {
    const created = await assetWrites.create(caller, req.body);
    return reply.code(201).header('location', `/api/v1/assets/${created.id}`).send({ data: created });
  });
  app.patch('/api/v1/assets/:id', async (req) => ({
    data: await assetWrites.update(caller, Number(req.params.id), req.body),
  }));
  return {
    app,
    close: async () => {
      await app.close();
      await reads.close();
      await writes.close();
    },
  };
}
