import { AccountService, type SignupMode } from './accounts/account-service.js';
import { CsrfTokens } from './accounts/csrf.js';
import { DeviceCookies } from './accounts/device-cookies.js';
import { PasswordResetService } from './accounts/password-resets.js';
import { SessionService } from './accounts/session-service.js';
import { INVITATION_POLICY, SIGN_UP_POLICY, SignInLimiter } from './accounts/sign-in-limiter.js';
import { TotpService } from './accounts/totp-service.js';
import { ActivityService } from './activity/service.js';
import { AssetService } from './assets/service.js';
import type { Config } from './config.js';
import type { Database } from './db/pool.js';
import type { WebhookInstruments } from './events/instruments.js';
import { LiveHub } from './events/live-hub.js';
import { type EventsOptions, EventsRuntime } from './events/runtime.js';
import { WebhookService } from './events/webhook-service.js';
import { createBucketStore } from './http/rate-limit/create.js';
import type { RateLimitStore } from './http/rate-limit/types.js';
import type { BrokerAddress } from './ingest/broker-port.js';
import type { IngestInstruments } from './ingest/instruments.js';
import { ReaderService } from './ingest/readers-service.js';
import { IngestService } from './ingest/service.js';
import { KeyService } from './keys/service.js';
import type { SigningKey } from './keys/signing-key.js';
import type { TokenCodec } from './keys/tokens.js';
import { LocationService } from './locations/service.js';
import { InvitationMailer } from './members/invitation-mail.js';
import { InvitationService } from './members/invitations.js';
import { MemberService } from './members/service.js';
import { PublicAddress } from './public-address.js';
import type { SecretBox } from './secrets/secret-box.js';
import { SpreadsheetService } from './spreadsheet/service.js';
import { TagService } from './tags/service.js';
import { TrackingService } from './tracking/service.js';

/** What the web app's back end (`/internal/`, docs/web-app.md) works with. */
export interface InternalServices {
  db: Database;
  accounts: AccountService;
  /** The activity log: who changed what (migration 0035 records it). */
  activity: ActivityService;
  /** Admin-issued, single-use password reset links. */
  passwordResets: PasswordResetService;
  sessions: SessionService;
  /** Two-factor sign-in with authenticator app codes (RFC 6238). */
  totp: TotpService;
  signInLimiter: SignInLimiter;
  /** Device cookies: which browsers signed in as an email before (SignInLimiter). */
  deviceCookies: DeviceCookies;
  /** Sign-ups per client address (SIGN_UP_POLICY): each is an argon2 hash and a new organization. */
  signUpLimiter: RateLimitStore;
  /** Invitations issued or resent per organization (INVITATION_POLICY): each may mail a link. */
  invitationLimiter: RateLimitStore;
  keys: KeyService;
  /** The organization's people and their roles (docs/web-app.md "Roles and members"). */
  members: MemberService;
  invitations: InvitationService;
  /** Sends invitation links when TAGTRAIL_SMTP_URL is set; null otherwise (the link is shown only). */
  invitationMailer: InvitationMailer | null;
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
  /** Webhook endpoints and delivery logs (docs/events.md). */
  webhooks: WebhookService;
  /** Dispatcher, delivery worker and not-seen sweeper: started by the running service only. */
  events: EventsRuntime;
  /** The live views' change notices (SSE, /internal/live). */
  live: LiveHub;
  /** Where mailed and shown links point (TAGTRAIL_PUBLIC_URL), never a request's Host header. */
  publicAddress: PublicAddress;
  /** TAGTRAIL_TRUST_PROXY: take the client address and protocol from X-Forwarded-* headers. */
  trustProxy: boolean;
  /** Where readers publish (the readers page shows it); null outside the running service. */
  broker: BrokerAddress | null;
  /** Who is logged in to the embedded broker; null when the service cannot see it (external broker, CLI). */
  readerPresence: ReaderPresence | null;
  close(): Promise<void>;
}

/** The readers with a live broker connection (the embedded broker's access control knows them). */
export interface ReaderPresence {
  connectedReaders(): ReadonlySet<number>;
}

export type InternalConfig = Partial<
  Pick<
    Config,
    | 'TAGTRAIL_SIGNUP'
    | 'TAGTRAIL_TRUST_PROXY'
    | 'TAGTRAIL_PUBLIC_URL'
    | 'TAGTRAIL_SMTP_URL'
    | 'TAGTRAIL_SMTP_FROM'
    | 'REDIS_URL'
    | 'TAGTRAIL_WEBHOOK_ALLOW_PRIVATE'
    | 'TAGTRAIL_NOT_SEEN_AFTER_SECONDS'
  >
> & {
  broker?: BrokerAddress;
  readerPresence?: ReaderPresence;
  /** The ingest metrics, shared with the reader path (handheld submissions count too). */
  instruments?: IngestInstruments;
  /** The webhook send metrics, for the delivery worker. */
  webhookInstruments?: WebhookInstruments;
  /** Tests: a delivery policy of their own (short retries). */
  events?: EventsOptions;
};

export async function createInternalServices(
  db: Database,
  tokens: TokenCodec,
  /** The signing key (CSRF tokens and device cookies are derived from it) and the box sealing stored secrets. */
  keys: { signing: SigningKey; secrets: SecretBox },
  config: InternalConfig,
): Promise<InternalServices> {
  const csrf = CsrfTokens.fromSecret(keys.signing.secret);
  const signInLimiter = SignInLimiter.create(config.REDIS_URL);
  const signUpLimiter = createBucketStore(config.REDIS_URL, SIGN_UP_POLICY, 'tagtrail:signup:');
  const invitationLimiter = createBucketStore(config.REDIS_URL, INVITATION_POLICY, 'tagtrail:invite:');
  const signup: SignupMode = config.TAGTRAIL_SIGNUP ?? 'first-user-only';
  const assets = new AssetService(db);
  const locations = new LocationService(db);
  const allowPrivate = config.TAGTRAIL_WEBHOOK_ALLOW_PRIVATE ?? false;
  const events = new EventsRuntime(db, keys.secrets, {
    notSeenAfterMs: (config.TAGTRAIL_NOT_SEEN_AFTER_SECONDS ?? 86_400) * 1000,
    instruments: config.webhookInstruments,
    ...config.events,
    delivery: { allowPrivate, ...config.events?.delivery },
  });
  const live = new LiveHub(db.pool.options);
  const invitationMailer = config.TAGTRAIL_SMTP_URL
    ? new InvitationMailer(
        config.TAGTRAIL_SMTP_URL,
        config.TAGTRAIL_SMTP_FROM ?? 'tagtrail <tagtrail@localhost>',
      )
    : null;
  return {
    db,
    accounts: new AccountService(db, signup),
    activity: new ActivityService(db),
    passwordResets: new PasswordResetService(db),
    sessions: new SessionService(db, tokens, csrf),
    totp: new TotpService(db, keys.secrets),
    signInLimiter,
    deviceCookies: DeviceCookies.fromSecret(keys.signing.secret),
    signUpLimiter,
    invitationLimiter,
    keys: new KeyService(db, tokens),
    members: new MemberService(db),
    invitations: new InvitationService(db),
    invitationMailer,
    readers: new ReaderService(db),
    ingest: new IngestService(db, undefined, config.instruments),
    tracking: new TrackingService(db),
    assets,
    locations,
    tags: new TagService(db),
    spreadsheets: new SpreadsheetService(db, assets, locations),
    webhooks: new WebhookService(db, keys.secrets, { allowPrivate, wake: () => events.wake() }),
    events,
    live,
    publicAddress: new PublicAddress(config.TAGTRAIL_PUBLIC_URL),
    trustProxy: config.TAGTRAIL_TRUST_PROXY ?? false,
    broker: config.broker ?? null,
    readerPresence: config.readerPresence ?? null,
    close: async () => {
      await events.stop();
      await live.close();
      invitationMailer?.close();
      await signInLimiter.close();
      await signUpLimiter.close();
      await invitationLimiter.close();
    },
  };
}
