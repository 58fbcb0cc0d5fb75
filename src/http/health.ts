import type { FastifyPluginAsync } from 'fastify';
import type { Database } from '../db/pool.js';

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

/**
 * Liveness and readiness for load balancers and orchestrators, outside /api/ (no rate
 * limit, no authentication, not in the OpenAPI document):
 * - `GET /healthz`: 200 while the process serves HTTP; it never looks at dependencies, so
 *   an orchestrator does not restart the service for a database outage it rides out;
 * - `GET /readyz`: 200 when every check passes, else 503 with Retry-After; each check names
 *   its state so an operator sees which dependency is missing.
 */
export const healthRoutes =
  (checks: ReadinessCheck[]): FastifyPluginAsync =>
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
      const states = await current();
      const ready = Object.values(states).every((s) => s === 'ok');
      reply.header('cache-control', 'no-store');
      if (!ready) reply.code(503).header('retry-after', RETRY_AFTER_SECONDS);
      return reply.send({ status: ready ? 'ready' : 'not_ready', checks: states });
    });
  };
