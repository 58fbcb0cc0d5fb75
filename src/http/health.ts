import type { FastifyPluginAsync } from 'fastify';
import type { Database } from '../db/pool.js';
import type { LameDuck } from './drain.js';

/** One dependency /readyz reports: resolves true when it is reachable. Must not throw. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<boolean>;
}

/** The database answers a round trip within 2 s. */
export const databaseReadiness = (db: Database): ReadinessCheck => ({
  name: 'database',
  check: () => db.ping(2_000).then(() => true),
});

/** The paths served here, outside /api/ and /internal/. */
export const HEALTH_PATHS = ['/healthz', '/readyz'];

/** How long a /readyz result is reused: probes are unauthenticated and not rate limited. */
const READY_CACHE_MS = 1_000;
/** Retry-After of a 503 /readyz, as of the API's 503 (docs/operations.md). */
const RETRY_AFTER_SECONDS = '5';

type Checks = Record<string, 'ok' | 'unavailable'>;

/** /readyz's answer while the instance drains before stopping: no dependency is asked. */
const DRAINING = { status: 'not_ready', checks: { shutdown: 'draining' } } as const;

/**
 * Liveness and readiness for load balancers and orchestrators, outside /api/ (no rate
 * limit, no authentication, not in the OpenAPI document):
 * - `GET /healthz`: 200 while the process serves HTTP; it never looks at dependencies, so
 *   an orchestrator does not restart the service for a database outage it rides out;
 * - `GET /readyz`: 200 when every check passes, else 503 with Retry-After; each check names
 *   its state so an operator sees which dependency is missing. While `lameDuck` drains (the
 *   instance is stopping) it answers 503 `{"status":"not_ready","checks":{"shutdown":"draining"}}`
 *   at once, never from the cache.
 */
export const healthRoutes =
  (checks: ReadinessCheck[], lameDuck?: LameDuck): FastifyPluginAsync =>
  async (app) => {
    let cached: { at: number; result: Promise<Checks> } | undefined;
    const evaluate = async (): Promise<Checks> => {
      const states = await Promise.all(checks.map((c) => c.check().catch(() => false)));
      return Object.fromEntries(checks.map((c, i) => [c.name, states[i] ? 'ok' : 'unavailable']));
    };
    const current = () => {
      const now = Date.now();
      if (!cached || now - cached.at >= READY_CACHE_MS) cached = { at: now, result: evaluate() };
      return cached.result;
    };
    const hide = { schema: { hide: true } };

    app.get('/healthz', hide, async (_request, reply) =>
      reply.header('cache-control', 'no-store').send({ status: 'ok' }),
    );
    app.get('/readyz', hide, async (_request, reply) => {
      if (lameDuck?.draining) {
        return reply
          .code(503)
          .header('cache-control', 'no-store')
          .header('retry-after', RETRY_AFTER_SECONDS)
          .send(DRAINING);
      }
      const states = await current();
      const ready = Object.values(states).every((s) => s === 'ok');
      reply.header('cache-control', 'no-store');
      if (!ready) reply.code(503).header('retry-after', RETRY_AFTER_SECONDS);
      return reply.send({ status: ready ? 'ready' : 'not_ready', checks: states });
    });
  };
