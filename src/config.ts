import { resolve } from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { Value, type ValueError } from '@sinclair/typebox/value';
import { parsePublicUrl } from './public-address.js';
import { parseSecretKeys } from './secrets/key-ring.js';
import { readTlsPair, type TlsFiles, type TlsPair } from './tls/tls-files.js';
import { hideUserInfo } from './url-user-info.js';

/**
 * /internal/ requests per minute per web session (a token bucket of this size, refilled in a
 * minute). The web app's busiest use, the Locations tree with many levels open at a site
 * whose reads move assets all the time, refetches each open level at most twice a second
 * (the live refresh's 500 ms quiet time): 30 open levels stay under 60 requests a second,
 * and the bucket absorbs any page load many times over (docs/web-app.md).
 */
export const DEFAULT_SESSION_RATE_LIMIT = 3600;

/** The longest drain before a stop; the systemd unit's stop timeout leaves room for it. */
export const MAX_SHUTDOWN_DRAIN_SECONDS = 300;

/**
 * Every setting the service reads from its environment, validated once at start so a
 * typo fails loudly instead of surfacing as odd behaviour hours later.
 */
const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  // HTTPS on PORT: PEM certificate (chain) and private key files, both or neither.
  TAGTRAIL_TLS_CERT: Type.Optional(Type.String({ minLength: 1 })),
  TAGTRAIL_TLS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  // Connections of each of the service's two PostgreSQL pools (its own role's and the API's
  // restricted one); unset: defaultPoolSize() (src/db/pool-size.ts), from this machine's cores.
  DATABASE_POOL_SIZE: Type.Optional(Type.Integer({ minimum: 2, maximum: 1000 })),
  TAGTRAIL_DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  TAGTRAIL_ENV: Type.Union([Type.Literal('production'), Type.Literal('preview')], { default: 'production' }),
  MQTT_URL: Type.Optional(Type.String({ pattern: '^(mqtts?|wss?|tcp)://' })),
  // Unset: DEFAULT_MQTT_PORT, or a free port when that one is taken. Set: exactly this port.
  TAGTRAIL_MQTT_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  // MQTTS listener of the embedded broker: PEM certificate (chain) and private key files, both or neither.
  TAGTRAIL_MQTT_TLS_CERT: Type.Optional(Type.String({ minLength: 1 })),
  TAGTRAIL_MQTT_TLS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  TAGTRAIL_MQTTS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8883 }),
  // Connections the embedded broker holds, in all and from one address (src/ingest/connection-gate.ts).
  TAGTRAIL_MQTT_MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1000000, default: 1000 }),
  TAGTRAIL_MQTT_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({ minimum: 1, maximum: 1000000, default: 256 }),
  // The ingest consumer's login on MQTT_URL when the URL does not carry one.
  TAGTRAIL_MQTT_USERNAME: Type.Optional(Type.String({ minLength: 1, maxLength: 65535 })),
  TAGTRAIL_MQTT_PASSWORD: Type.Optional(Type.String({ minLength: 1, maxLength: 65535 })),
  // Ingest: instances sharing this group split reader messages ($share/<group>/<topic>; MQTT_URL only).
  TAGTRAIL_MQTT_SHARED_GROUP: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
  // Whether this instance takes reader messages from MQTT_URL. false: it serves the API, the web
  // app and reader webhooks only, its event loop free of a backlog's work (docs/operations.md,
  // "Running several instances"); MQTT_URL only, since the embedded broker's readers reach no other.
  TAGTRAIL_MQTT_CONSUME: Type.Boolean({ default: true }),
  // Suffix of this instance's MQTT client id (tagtrail-ingest-<instance>); distinct per instance.
  TAGTRAIL_INSTANCE: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
  TAGTRAIL_RAW_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 7 }),
  // Days the activity log (who changed what) is kept; older entries are deleted hourly.
  TAGTRAIL_ACTIVITY_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36500, default: 365 }),
  // Days finished webhook deliveries and dispatched events are kept (docs/events.md "Retention").
  TAGTRAIL_EVENTS_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  TAGTRAIL_RATE_LIMIT: Type.Integer({ minimum: 1, default: 6000 }),
  TAGTRAIL_RATE_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 60 }),
  TAGTRAIL_BODY_LIMIT: Type.Integer({ minimum: 1024, default: 1048576 }),
  // Reader webhook messages per minute per reader (a token bucket of this size refilled each minute).
  TAGTRAIL_WEBHOOK_RATE_LIMIT: Type.Integer({ minimum: 1, default: 600 }),
  // /internal/ requests per minute per web session; below one a second the app's own page
  // loads and live refreshes would meet it, so lower is refused rather than obeyed.
  TAGTRAIL_SESSION_RATE_LIMIT: Type.Integer({ minimum: 60, default: DEFAULT_SESSION_RATE_LIMIT }),
  // Connection bounds (docs/operations.md "Connections"): slow or idle clients cannot hold sockets.
  TAGTRAIL_HEADERS_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 300, default: 10 }),
  TAGTRAIL_REQUEST_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 60 }),
  TAGTRAIL_KEEP_ALIVE_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 65 }),
  // A large site behind one NAT address may need more than the default (about six per browser);
  // the same default as DEFAULT_CONNECTION_LIMITS (src/http/connections.ts).
  TAGTRAIL_HTTP_MAX_CONNECTIONS_PER_ADDRESS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1024 }),
  // Lame duck before stopping (docs/operations.md "Stopping"): seconds /readyz answers 503 and
  // responses close their connections before the stop. 0: stop at once (a laptop's Ctrl-C).
  TAGTRAIL_SHUTDOWN_DRAIN_SECONDS: Type.Integer({
    minimum: 0,
    maximum: MAX_SHUTDOWN_DRAIN_SECONDS,
    default: 0,
  }),
  TAGTRAIL_SIGNUP: Type.Union(
    [Type.Literal('first-user-only'), Type.Literal('open'), Type.Literal('closed')],
    {
      default: 'first-user-only',
    },
  ),
  TAGTRAIL_TRUST_PROXY: Type.Boolean({ default: false }),
  // The address people reach the service at, the start of every mailed or shown link (reset,
  // invitation); never read from a request's Host header. Checked below (parsePublicUrl).
  TAGTRAIL_PUBLIC_URL: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  // Invitation mail (docs/web-app.md "Roles and members"): smtp:// (STARTTLS when offered) or
  // smtps://, credentials in the URL. Unset, the link is only shown to the admin to pass on.
  TAGTRAIL_SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  // An address, bare or after a display name in angle brackets; anything else would only fail
  // when the first invitation is mailed.
  TAGTRAIL_SMTP_FROM: Type.String({
    minLength: 3,
    maxLength: 254,
    pattern: '^(?:[^<>]*<[^<>@\\s]+@[^<>@\\s]+>|[^<>@\\s]+@[^<>@\\s]+)$',
    expected: 'must be an address (name@example.com) or a name and an address (tagtrail <name@example.com>)',
    default: 'tagtrail <tagtrail@localhost>',
  }),
  // Keys sealing the secrets stored in the database (docs/operations.md "Secrets at rest"):
  // base64 of 32 bytes each, comma-separated, the sealing key first. Unset: the key file in
  // the data directory on the embedded database; none on DATABASE_URL (stored as given).
  TAGTRAIL_SECRET_KEYS: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  // Bearer token of GET /metrics (docs/metrics.md); unset, the endpoint is off. Printable ASCII
  // without spaces (it travels in a header), long enough not to be guessed.
  TAGTRAIL_METRICS_TOKEN: Type.Optional(
    Type.String({ minLength: 16, maxLength: 1024, pattern: '^[\\x21-\\x7E]+$' }),
  ),
  // Outbound webhooks may go to http URLs and to loopback/private addresses (docs/events.md).
  TAGTRAIL_WEBHOOK_ALLOW_PRIVATE: Type.Boolean({ default: false }),
  // asset.not_seen: an asset not seen for this long at its last location.
  TAGTRAIL_NOT_SEEN_AFTER_SECONDS: Type.Integer({ minimum: 60, maximum: 31_536_000, default: 86_400 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
});

/** The embedded broker's port when TAGTRAIL_MQTT_PORT is not set (MQTT's registered port). */
export const DEFAULT_MQTT_PORT = 1883;

export type Config = Static<typeof ConfigSchema> & {
  dataDir: string;
  /** The HTTP server's certificate and key (HTTPS), read and checked at start. */
  httpTls?: TlsPair;
  /** The embedded broker's MQTTS certificate and key, read and checked at start. */
  mqttTls?: TlsPair;
};

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  // Convert writes into the object it is given; raw keeps the text as set, for the checks below.
  const converted = Value.Convert(ConfigSchema, { ...raw }) as Record<string, unknown>;
  // TypeBox's conversion truncates "1.5" to 1 and reads "1e3" as 1000; whole-number settings
  // take plain digits only, anything else stays text so validation refuses it by name.
  for (const name of INTEGER_SETTINGS) {
    if (typeof raw[name] === 'string') converted[name] = parseWholeNumber(raw[name]);
  }
  const withDefaults = Value.Default(ConfigSchema, converted);
  const errors = [...Value.Errors(ConfigSchema, withDefaults)];
  if (errors.length > 0) {
    throw new ConfigError(`invalid configuration:\n${describeErrors(errors, raw).join('\n')}`);
  }
  const config = withDefaults as Static<typeof ConfigSchema>;
  // The patterns check the scheme only: "postgres://u:p@[db" passes them, and the driver's
  // own parse then stopped the start with a bare "Invalid URL" that named no setting.
  const unparsable = CLIENT_URL_SETTINGS.filter(
    (name) => typeof raw[name] === 'string' && !URL.canParse(raw[name] as string),
  );
  if (unparsable.length > 0) {
    throw new ConfigError(
      `invalid configuration:\n${unparsable
        .map((name) => `  ${name}=${JSON.stringify(hideUserInfo(raw[name] as string))}: not a valid URL`)
        .join('\n')}`,
    );
  }
  if (config.TAGTRAIL_SECRET_KEYS) {
    try {
      parseSecretKeys(config.TAGTRAIL_SECRET_KEYS, 'TAGTRAIL_SECRET_KEYS');
    } catch (err) {
      throw new ConfigError(`invalid configuration:\n  ${(err as Error).message}`);
    }
  }
  // The whole request includes its headers. Left at its default, the request timeout
  // follows a longer headers timeout; set shorter, it is a contradiction.
  if (
    raw.TAGTRAIL_REQUEST_TIMEOUT_SECONDS !== undefined &&
    config.TAGTRAIL_REQUEST_TIMEOUT_SECONDS < config.TAGTRAIL_HEADERS_TIMEOUT_SECONDS
  ) {
    throw new ConfigError(
      `invalid configuration:\n  TAGTRAIL_REQUEST_TIMEOUT_SECONDS=${config.TAGTRAIL_REQUEST_TIMEOUT_SECONDS} must be at least TAGTRAIL_HEADERS_TIMEOUT_SECONDS=${config.TAGTRAIL_HEADERS_TIMEOUT_SECONDS}: the whole request includes its headers`,
    );
  }
  if (!config.TAGTRAIL_MQTT_CONSUME && !config.MQTT_URL) {
    throw new ConfigError(
      'invalid configuration:\n  TAGTRAIL_MQTT_CONSUME=false needs MQTT_URL: the readers of the embedded broker publish to this instance alone, so it must take their messages',
    );
  }
  const clash = portClash(config);
  if (clash) throw new ConfigError(`invalid configuration:\n  ${clash}`);
  if (config.TAGTRAIL_PUBLIC_URL !== undefined) {
    const parsed = parsePublicUrl(config.TAGTRAIL_PUBLIC_URL);
    if ('error' in parsed) {
      throw new ConfigError(
        `invalid configuration:\n  TAGTRAIL_PUBLIC_URL=${JSON.stringify(hideUserInfo(config.TAGTRAIL_PUBLIC_URL))}: ${parsed.error}`,
      );
    }
    config.TAGTRAIL_PUBLIC_URL = parsed.origin;
  }
  const files = tlsFiles(config);
  return {
    ...config,
    dataDir: resolve(config.TAGTRAIL_DATA_DIR),
    httpTls: loadTls(files.http),
    mqttTls: loadTls(files.mqtt),
  };
}

/**
 * Two of the service's own listeners set to one port: the second to start met the first
 * and said only "port … is in use; set PORT to another port", as if something else held it.
 * 0 (any free port) never clashes; the broker's ports count only when it runs (no MQTT_URL),
 * its MQTTS port only with its certificate.
 */
function portClash(config: Static<typeof ConfigSchema>): string | undefined {
  const ports: [string, number | undefined][] = [['PORT', config.PORT]];
  if (!config.MQTT_URL) {
    ports.push(['TAGTRAIL_MQTT_PORT', config.TAGTRAIL_MQTT_PORT]);
    if (config.TAGTRAIL_MQTT_TLS_CERT) ports.push(['TAGTRAIL_MQTTS_PORT', config.TAGTRAIL_MQTTS_PORT]);
  }
  for (const [i, [name, port]] of ports.entries()) {
    if (!port) continue;
    const other = ports.slice(i + 1).find(([, p]) => p === port);
    if (other)
      return `${name}=${port} and ${other[0]}=${port}: two of the service's listeners cannot share a port`;
  }
  return undefined;
}

/** The files of each TLS listener, as configured (read again when certificates are reloaded). */
export function tlsFiles(config: Static<typeof ConfigSchema>): { http: TlsFiles; mqtt: TlsFiles } {
  return {
    http: {
      certVar: 'TAGTRAIL_TLS_CERT',
      keyVar: 'TAGTRAIL_TLS_KEY',
      certFile: config.TAGTRAIL_TLS_CERT,
      keyFile: config.TAGTRAIL_TLS_KEY,
    },
    mqtt: {
      certVar: 'TAGTRAIL_MQTT_TLS_CERT',
      keyVar: 'TAGTRAIL_MQTT_TLS_KEY',
      certFile: config.TAGTRAIL_MQTT_TLS_CERT,
      keyFile: config.TAGTRAIL_MQTT_TLS_KEY,
    },
  };
}

/** A listener's pair, so that a missing file or a key that does not match stops the start. */
function loadTls(files: TlsFiles): TlsPair | undefined {
  try {
    return readTlsPair(files);
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  ${(err as Error).message}`);
  }
}

/** The name of every setting the service reads. */
export const SETTINGS: readonly string[] = Object.keys(ConfigSchema.properties);

/** Settings that take a whole number (TypeBox integers); exported so the tests cover each one. */
export const INTEGER_SETTINGS: readonly string[] = Object.entries(
  ConfigSchema.properties as Record<string, { type?: unknown }>,
)
  .filter(([, schema]) => schema.type === 'integer')
  .map(([name]) => name);

/** Plain decimal digits (optionally negative, so a range error says what is wrong) as a number; else the text. */
function parseWholeNumber(text: string): number | string {
  if (!/^-?[0-9]+$/.test(text)) return text;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}

/** What a whole-number setting accepts, from its schema's bounds. */
function wholeNumberRange(name: string): string | undefined {
  const schema = (
    ConfigSchema.properties as Record<string, { type?: unknown; minimum?: number; maximum?: number }>
  )[name];
  if (schema?.type !== 'integer') return undefined;
  if (schema.maximum !== undefined)
    return `must be a whole number from ${schema.minimum ?? 0} to ${schema.maximum}`;
  return `must be a whole number of at least ${schema.minimum ?? 0}`;
}

/** Settings whose values may carry a password in their user information. */
const URL_SETTINGS = new Set([
  'DATABASE_URL',
  'MQTT_URL',
  'REDIS_URL',
  'TAGTRAIL_SMTP_URL',
  'TAGTRAIL_PUBLIC_URL',
]);

/** URL settings handed to a client library (TAGTRAIL_PUBLIC_URL has a check of its own). */
const CLIENT_URL_SETTINGS = [...URL_SETTINGS].filter((name) => name !== 'TAGTRAIL_PUBLIC_URL');

/** Settings whose values are secrets. */
const SECRET_SETTINGS = new Set(['TAGTRAIL_METRICS_TOKEN', 'TAGTRAIL_MQTT_PASSWORD', 'TAGTRAIL_SECRET_KEYS']);

/** The allowed literals of an enum-like (union of literals) setting, or undefined otherwise. */
function allowedValues(name: string): string[] | undefined {
  const schema = (ConfigSchema.properties as Record<string, { anyOf?: { const?: unknown }[] }>)[name];
  const options = schema?.anyOf?.map((option) => option.const);
  if (!options || options.some((o) => typeof o !== 'string')) return undefined;
  return options as string[];
}

/** Whether a setting is a TypeBox boolean (TypeBox alone says "Expected boolean"). */
function isBooleanSetting(name: string): boolean {
  return (ConfigSchema.properties as Record<string, { type?: unknown }>)[name]?.type === 'boolean';
}

/**
 * One line per invalid variable: its name, the value given and, for enum settings, the
 * allowed values (TypeBox alone says "Expected union value", which tells nobody what to
 * write). Several errors on one variable (a union reports each branch) are folded into one.
 */
function describeErrors(errors: ValueError[], given: Record<string, unknown>): string[] {
  const byName = new Map<string, ValueError>();
  for (const error of errors) {
    const name = error.path.slice(1).split('/')[0] ?? error.path;
    if (!byName.has(name)) byName.set(name, error);
  }
  return [...byName].map(([name, error]) => {
    // A secret's value stays out of the message (it ends up in logs and terminals).
    // The text as set, not as converted: "1e400" would otherwise print as null.
    const text = given[name] ?? error.value;
    const value = SECRET_SETTINGS.has(name)
      ? '(hidden)'
      : JSON.stringify(URL_SETTINGS.has(name) && typeof text === 'string' ? hideUserInfo(text) : text);
    const allowed = allowedValues(name);
    if (allowed) return `  ${name}=${value}: must be one of ${allowed.join(', ')}`;
    const range = wholeNumberRange(name);
    if (range) return `  ${name}=${value}: ${range} (digits only)`;
    if (isBooleanSetting(name)) return `  ${name}=${value}: must be true or false (or 1 or 0)`;
    const expected = (ConfigSchema.properties as Record<string, { expected?: string }>)[name]?.expected;
    if (expected) return `  ${name}=${value}: ${expected}`;
    return `  ${name}=${value}: ${error.message}`;
  });
}
