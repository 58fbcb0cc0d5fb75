import type { FastifyPluginAsync } from 'fastify';
import { type App, type AppOptions, buildServer } from '../../src/app.js';
import { cliCaller } from '../../src/caller.js';
import type { Config } from '../../src/config.js';
import type { EventsOptions } from '../../src/events/runtime.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import type { RateLimitStore } from '../../src/http/rate-limit/types.js';
import type { Scope } from '../../src/keys/scopes.js';
import { createServices, type Services } from '../../src/services.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { TEST_SECRETS } from './secrets.js';

export interface TestOrg {
  id: number;
  name: string;
  /** Mints a key of this organization; all mintable scopes unless given. */
  key(
    scopes?: Scope[] | string[],
    options?: { expiresInSeconds?: number },
  ): Promise<{ id: string; token: string }>;
}

export interface TestApp {
  app: App;
  services: Services;
  database: TestDatabase;
  createOrg(name?: string): Promise<TestOrg>;
  close(): Promise<void>;
}

export const ALL_SCOPES: Scope[] = [
  'assets:read',
  'assets:write',
  'locations:read',
  'locations:write',
  'tracking:read',
];

export interface TestAppOptions {
  rateLimit?: RateLimitStore;
  environment?: Config['TAGTRAIL_ENV'];
  bodyLimit?: number;
  routes?: FastifyPluginAsync[];
  connection?: AppOptions['connection'];
  /** The server's logger (none unless given). */
  logger?: AppOptions['logger'];
  /** TAGTRAIL_WEBHOOK_RATE_LIMIT: reader webhook messages per minute per reader. */
  webhookRateLimit?: number;
  /** TAGTRAIL_WEBHOOK_ALLOW_PRIVATE: outbound webhooks to local receivers. */
  allowPrivateWebhooks?: boolean;
  /** The events runtime's options (it is not started unless a test starts it). */
  events?: EventsOptions;
  /** A database prepared by the test (an upgrade's), migrated; otherwise a fresh one. */
  database?: TestDatabase;
}

/**
 * The fastify/demo `build(t)` idea: a real server over a fresh real database, driven
 * with `app.inject`. Close it in afterAll.
 */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const rateLimit = options.rateLimit ?? new MemoryRateLimitStore({ limit: 1_000_000, windowSeconds: 60 });
  const services = await createServices(
    database.db,
    {
      TAGTRAIL_ENV: options.environment ?? 'production',
      secrets: TEST_SECRETS,
      REDIS_URL: undefined,
      TAGTRAIL_RATE_LIMIT: 1_000_000,
      TAGTRAIL_RATE_WINDOW_SECONDS: 60,
      TAGTRAIL_WEBHOOK_RATE_LIMIT: options.webhookRateLimit,
      TAGTRAIL_WEBHOOK_ALLOW_PRIVATE: options.allowPrivateWebhooks,
      events: options.events,
    },
    rateLimit,
  );
  const app = await buildServer(services, {
    bodyLimit: options.bodyLimit ?? 1048576,
    routes: options.routes,
    connection: options.connection,
    logger: options.logger,
  });
  await app.ready();
  let counter = 0;
  return {
    app,
    services,
    database,
    async createOrg(name = `Org ${++counter}`) {
      const org = await services.organizations.create(name);
      return {
        id: org.id,
        name: org.name,
        async key(scopes = ALL_SCOPES, keyOptions = {}) {
          const minted = await services.keys.mint({ caller: cliCaller(org.id), scopes, ...keyOptions });
          return { id: minted.key.id, token: minted.token };
        },
      };
    },
    async close() {
      await app.close();
      await services.close();
      await database.drop();
    },
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
