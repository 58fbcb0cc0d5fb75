import { OrganizationService } from './accounts/service.js';
import type { AppServices } from './app.js';
import { AssetService } from './assets/service.js';
import { type Config, DEFAULT_SESSION_RATE_LIMIT } from './config.js';
import type { Database } from './db/pool.js';
import type { EventsOptions } from './events/runtime.js';
import { createBucketStore } from './http/rate-limit/create.js';
import { MemoryRateLimitStore } from './http/rate-limit/memory-store.js';
import { RedisRateLimitStore } from './http/rate-limit/redis-store.js';
import type { RateLimitStore } from './http/rate-limit/types.js';
import type { BrokerAddress } from './ingest/broker-port.js';
import { ReaderService } from './ingest/readers-service.js';
import { IngestService } from './ingest/service.js';
import { createInternalServices, type ReaderPresence } from './internal-services.js';
import { ApiKeyAuthenticator } from './keys/authenticate.js';
import { ApiKeyCache } from './keys/key-cache.js';
import { KeyService } from './keys/service.js';
import { loadSigningKey } from './keys/signing-key.js';
import { TokenCodec } from './keys/tokens.js';
import { LocationService } from './locations/service.js';
import { ServiceMetrics } from './metrics/index.js';
import { resealSecrets } from './secrets/reseal.js';
import type { SecretBox } from './secrets/secret-box.js';
import { TagService } from './tags/service.js';
import { TrackingService } from './tracking/service.js';

export interface Services extends AppServices {
  /** The series of GET /metrics (docs/metrics.md); the runtime adds the broker's. */
  metrics: ServiceMetrics;
  keys: KeyService;
  tokens: TokenCodec;
  close(): Promise<void>;
}

export type ServiceConfig = Pick<
  Config,
  'TAGTRAIL_ENV' | 'REDIS_URL' | 'TAGTRAIL_RATE_LIMIT' | 'TAGTRAIL_RATE_WINDOW_SECONDS'
> &
  Partial<
    Pick<
      Config,
      | 'TAGTRAIL_SIGNUP'
      | 'TAGTRAIL_TRUST_PROXY'
      | 'TAGTRAIL_PUBLIC_URL'
      | 'TAGTRAIL_SMTP_URL'
      | 'TAGTRAIL_SMTP_FROM'
      | 'TAGTRAIL_WEBHOOK_RATE_LIMIT'
      | 'TAGTRAIL_SESSION_RATE_LIMIT'
      | 'TAGTRAIL_WEBHOOK_ALLOW_PRIVATE'
      | 'TAGTRAIL_NOT_SEEN_AFTER_SECONDS'
    >
  > & {
    /** Where readers publish, shown on the readers page; unknown outside the service (CLI, tests). */
    broker?: BrokerAddress;
    /** Tests: the events runtime's options (short retries, fast polling). */
    events?: EventsOptions;
    /** The embedded broker's logged-in readers, for the readers' health. */
    readerPresence?: ReaderPresence;
    /** Seals the secrets the service stores and must read back (src/secrets/key-ring.ts). */
    secrets: SecretBox;
  };

export function createRateLimitStore(config: ServiceConfig): RateLimitStore {
  const policy = { limit: config.TAGTRAIL_RATE_LIMIT, windowSeconds: config.TAGTRAIL_RATE_WINDOW_SECONDS };
  return config.REDIS_URL
    ? new RedisRateLimitStore(config.REDIS_URL, policy)
    : new MemoryRateLimitStore(policy);
}

/** Every domain service over one database; shared by the server, the CLI and tests. */
export async function createServices(
  db: Database,
  config: ServiceConfig,
  rateLimit: RateLimitStore = createRateLimitStore(config),
  // Node's process series only where asked (the running service), not in every test app.
  metrics: ServiceMetrics = new ServiceMetrics({ processMetrics: false }),
): Promise<Services> {
  metrics.watchPool(db.pool, db.appPool);
  metrics.watchTransactionRetries(() => db.stats.transientConflictRetries);
  // Before anything reads a stored secret: refuses to start with keys that cannot open them.
  await resealSecrets(db.pool, config.secrets);
  const signing = await loadSigningKey(db, config.secrets);
  const tokens = new TokenCodec(signing, config.TAGTRAIL_ENV);
  const internal = await createInternalServices(
    db,
    tokens,
    { signing, secrets: config.secrets },
    { ...config, instruments: metrics.ingest, webhookInstruments: metrics.webhooks },
  );
  const authenticator = new ApiKeyAuthenticator(db, tokens, new ApiKeyCache(db.pool.options));
  const webhookRateLimit = createBucketStore(
    config.REDIS_URL,
    { limit: config.TAGTRAIL_WEBHOOK_RATE_LIMIT ?? 600, windowSeconds: 60 },
    'tagtrail:webhook:',
  );
  const sessionRateLimit = createBucketStore(
    config.REDIS_URL,
    { limit: config.TAGTRAIL_SESSION_RATE_LIMIT ?? DEFAULT_SESSION_RATE_LIMIT, windowSeconds: 60 },
    'tagtrail:internal:',
  );
  return {
    tokens,
    organizations: new OrganizationService(db),
    keys: new KeyService(db, tokens),
    authenticator,
    tags: new TagService(db),
    locations: new LocationService(db),
    assets: new AssetService(db),
    tracking: new TrackingService(db),
    readers: new ReaderService(db),
    ingest: new IngestService(db, undefined, metrics.ingest),
    metrics,
    rateLimit,
    webhookRateLimit,
    sessionRateLimit,
    internal,
    close: async () => {
      await rateLimit.close();
      await webhookRateLimit.close();
      await sessionRateLimit.close();
      await internal.close();
      await authenticator.close();
    },
  };
}
