import { AccountService, type SignupMode } from './accounts/account-service.js';
import { CsrfTokens } from './accounts/csrf.js';
import { SessionService } from './accounts/session-service.js';
import { SIGN_UP_POLICY, SignInLimiter } from './accounts/sign-in-limiter.js';
import { AssetService } from './assets/service.js';
import type { Config } from './config.js';
import type { Database } from './db/pool.js';
import { createBucketStore } from './http/rate-limit/create.js';
import type { RateLimitStore } from './http/rate-limit/types.js';
import type { BrokerAddress } from './ingest/broker-port.js';
import { ReaderService } from './ingest/readers-service.js';
import { IngestService } from './ingest/service.js';
import { KeyService } from './keys/service.js';
import type { TokenCodec } from './keys/tokens.js';
import { LocationService } from './locations/service.js';
import { SpreadsheetService } from './spreadsheet/service.js';
import { TagService } from './tags/service.js';
import { TrackingService } from './tracking/service.js';

/** What the web app's back end (`/internal/`, docs/web-app.md) works with. */
export interface InternalServices {
  db: Database;
  accounts: AccountService;
  sessions: SessionService;
  signInLimiter: SignInLimiter;
  /** Sign-ups per client address (SIGN_UP_POLICY): each is an argon2 hash and a new organization. */
  signUpLimiter: RateLimitStore;
  keys: KeyService;
  readers: ReaderService;
  ingest: IngestService;
  tracking: TrackingService;
  /** The public API's asset and tag services: the web app's writes follow the same rules. */
  assets: AssetService;
  /** The same services as the public API, so the web app gets the same rules and messages. */
  locations: LocationService;
  tags: TagService;
  /** CSV import and export of assets and locations (docs/import-export.md). */
  spreadsheets: SpreadsheetService;
  /** TAGTRAIL_TRUST_PROXY: take the client address and protocol from X-Forwarded-* headers. */
  trustProxy: boolean;
  /** Where readers publish (the readers page shows it); null outside the running service. */
  broker: BrokerAddress | null;
  close(): Promise<void>;
}

export type InternalConfig = Partial<
  Pick<Config, 'TAGTRAIL_SIGNUP' | 'TAGTRAIL_TRUST_PROXY' | 'REDIS_URL'>
> & {
  broker?: BrokerAddress;
};

export async function createInternalServices(
  db: Database,
  tokens: TokenCodec,
  config: InternalConfig,
): Promise<InternalServices> {
  const csrf = await CsrfTokens.fromDatabase(db);
  const signInLimiter = SignInLimiter.create(config.REDIS_URL);
  const signUpLimiter = createBucketStore(config.REDIS_URL, SIGN_UP_POLICY, 'tagtrail:signup:');
  const signup: SignupMode = config.TAGTRAIL_SIGNUP ?? 'first-user-only';
  const assets = new AssetService(db);
  const locations = new LocationService(db);
  return {
    db,
    accounts: new AccountService(db, signup),
    sessions: new SessionService(db, tokens, csrf),
    signInLimiter,
    signUpLimiter,
    keys: new KeyService(db, tokens),
    readers: new ReaderService(db),
    ingest: new IngestService(db),
    tracking: new TrackingService(db),
    assets,
    locations,
    tags: new TagService(db),
    spreadsheets: new SpreadsheetService(db, assets, locations),
    trustProxy: config.TAGTRAIL_TRUST_PROXY ?? false,
    broker: config.broker ?? null,
    close: async () => {
      await signInLimiter.close();
      await signUpLimiter.close();
    },
  };
}
