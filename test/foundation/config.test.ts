import { describe, expect, it } from 'vitest';
import { ConfigError, INTEGER_SETTINGS, loadConfig } from '../../src/config.js';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected loadConfig to refuse');
}

describe('configuration errors', () => {
  it('names the variable, the value given and the allowed values of an enum setting', () => {
    const message = configError({ TAGTRAIL_SIGNUP: 'yes' });
    expect(message).toContain('TAGTRAIL_SIGNUP="yes": must be one of first-user-only, open, closed');
    expect(message).not.toContain('Expected union value');
  });

  it.each([
    ['TAGTRAIL_ENV', 'prod', 'production, preview'],
    ['LOG_LEVEL', 'verbose', 'fatal, error, warn, info, debug, trace, silent'],
  ])('lists the allowed values of %s', (name, value, allowed) => {
    expect(configError({ [name]: value })).toContain(`${name}="${value}": must be one of ${allowed}`);
  });

  it.each([
    ['TAGTRAIL_TRUST_PROXY', {}],
    ['TAGTRAIL_WEBHOOK_ALLOW_PRIVATE', {}],
    ['TAGTRAIL_MQTT_CONSUME', { MQTT_URL: 'mqtt://broker.example:1883' }],
  ] as const)(
    'says which values the boolean %s accepts, and takes them',
    (name, others: Record<string, string>) => {
      const message = configError({ ...others, [name]: 'yes' });
      expect(message).toContain(`${name}="yes": must be true or false (or 1 or 0)`);
      expect(message).not.toContain('Expected boolean');
      for (const [text, value] of [
        ['true', true],
        ['false', false],
        ['1', true],
        ['0', false],
      ] as const) {
        expect((loadConfig({ ...others, [name]: text }) as Record<string, unknown>)[name]).toBe(value);
      }
    },
  );

  it('consumes from MQTT_URL by default, and refuses TAGTRAIL_MQTT_CONSUME=false without MQTT_URL', () => {
    expect(loadConfig({ MQTT_URL: 'mqtt://broker.example:1883' }).TAGTRAIL_MQTT_CONSUME).toBe(true);
    expect(loadConfig({}).TAGTRAIL_MQTT_CONSUME).toBe(true);
    for (const off of ['false', '0']) {
      expect(configError({ TAGTRAIL_MQTT_CONSUME: off })).toContain(
        'TAGTRAIL_MQTT_CONSUME=false needs MQTT_URL: the readers of the embedded broker publish to this instance alone',
      );
    }
  });

  it('takes a sender address for TAGTRAIL_SMTP_FROM, bare or after a name, and refuses anything else', () => {
    for (const value of [
      'no-reply@depot.test',
      'tagtrail <tagtrail@localhost>',
      '"ops@depot, Inc." <a@b.test>',
    ]) {
      expect(loadConfig({ TAGTRAIL_SMTP_FROM: value }).TAGTRAIL_SMTP_FROM).toBe(value);
    }
    expect(loadConfig({}).TAGTRAIL_SMTP_FROM).toBe('tagtrail <tagtrail@localhost>');
    for (const value of ['tagtrail', 'tagtrail <tagtrail>', 'a b@c.test', 'x <a@b.test> y']) {
      expect(configError({ TAGTRAIL_SMTP_FROM: value })).toContain(
        `TAGTRAIL_SMTP_FROM=${JSON.stringify(value)}: must be an address (name@example.com) or a name and an address`,
      );
    }
  });

  it('reports each invalid variable once, with its value', () => {
    const message = configError({ TAGTRAIL_SIGNUP: 'yes', PORT: 'eighty', LOG_LEVEL: 'loud' });
    const lines = message.split('\n').slice(1);
    expect(lines).toHaveLength(3);
    expect(message).toContain('PORT="eighty"');
    expect(message).toContain('LOG_LEVEL="loud": must be one of');
  });

  it('accepts every allowed enum value', () => {
    for (const value of ['first-user-only', 'open', 'closed']) {
      expect(loadConfig({ TAGTRAIL_SIGNUP: value }).TAGTRAIL_SIGNUP).toBe(value);
    }
  });

  it('takes the activity retention in days, 365 unless set, and refuses a value out of range', () => {
    expect(loadConfig({}).TAGTRAIL_ACTIVITY_RETENTION_DAYS).toBe(365);
    expect(loadConfig({ TAGTRAIL_ACTIVITY_RETENTION_DAYS: '30' }).TAGTRAIL_ACTIVITY_RETENTION_DAYS).toBe(30);
    for (const bad of ['0', '-1', 'forever', '36501']) {
      expect(configError({ TAGTRAIL_ACTIVITY_RETENTION_DAYS: bad })).toMatch(
        /^invalid configuration:\n {2}TAGTRAIL_ACTIVITY_RETENTION_DAYS=/,
      );
    }
  });
});

describe('connection timeouts', () => {
  it('refuses a request timeout set shorter than the headers timeout, naming both', () => {
    const message = configError({
      TAGTRAIL_HEADERS_TIMEOUT_SECONDS: '30',
      TAGTRAIL_REQUEST_TIMEOUT_SECONDS: '10',
    });
    expect(message).toContain(
      'TAGTRAIL_REQUEST_TIMEOUT_SECONDS=10 must be at least TAGTRAIL_HEADERS_TIMEOUT_SECONDS=30',
    );
  });

  it('takes equal bounds, and a longer headers timeout when the request timeout is left at its default', () => {
    expect(
      loadConfig({ TAGTRAIL_HEADERS_TIMEOUT_SECONDS: '30', TAGTRAIL_REQUEST_TIMEOUT_SECONDS: '30' }),
    ).toMatchObject({ TAGTRAIL_REQUEST_TIMEOUT_SECONDS: 30 });
    expect(loadConfig({ TAGTRAIL_HEADERS_TIMEOUT_SECONDS: '120' })).toMatchObject({
      TAGTRAIL_HEADERS_TIMEOUT_SECONDS: 120,
    });
  });
});

describe("the service's own ports", () => {
  // The clash is told before the files are read.
  const MQTT_TLS = {
    TAGTRAIL_MQTT_TLS_CERT: '/nonexistent/cert.pem',
    TAGTRAIL_MQTT_TLS_KEY: '/nonexistent/key.pem',
  };
  it('refuses two listeners on one port, naming both settings', () => {
    expect(configError({ PORT: '41210', TAGTRAIL_MQTT_PORT: '41210' })).toContain(
      "PORT=41210 and TAGTRAIL_MQTT_PORT=41210: two of the service's listeners cannot share a port",
    );
    expect(configError({ TAGTRAIL_MQTT_PORT: '8883', ...MQTT_TLS })).toContain(
      'TAGTRAIL_MQTT_PORT=8883 and TAGTRAIL_MQTTS_PORT=8883',
    );
  });

  it('takes one port for a broker that does not run here, for MQTTS without its certificate, and 0 twice', () => {
    expect(
      loadConfig({ PORT: '1883', MQTT_URL: 'mqtt://broker:1883', TAGTRAIL_MQTT_PORT: '1883' }),
    ).toMatchObject({
      PORT: 1883,
    });
    expect(loadConfig({ TAGTRAIL_MQTT_PORT: '8883' })).toMatchObject({ TAGTRAIL_MQTTS_PORT: 8883 });
    expect(loadConfig({ PORT: '0', TAGTRAIL_MQTT_PORT: '0' })).toMatchObject({ PORT: 0 });
  });
});

describe('DATABASE_POOL_SIZE', () => {
  // Its bounds and the values it refuses are the whole-number settings' table below.
  it('is unset unless given: the pools then follow the cores (src/db/pool-size.ts)', () => {
    expect(loadConfig({}).DATABASE_POOL_SIZE).toBeUndefined();
    expect(loadConfig({ DATABASE_POOL_SIZE: '8' }).DATABASE_POOL_SIZE).toBe(8);
  });
});

describe('TAGTRAIL_EVENTS_RETENTION_DAYS', () => {
  it('is 30 days unless set, and refuses a value out of range', () => {
    expect(loadConfig({}).TAGTRAIL_EVENTS_RETENTION_DAYS).toBe(30);
    expect(loadConfig({ TAGTRAIL_EVENTS_RETENTION_DAYS: '7' }).TAGTRAIL_EVENTS_RETENTION_DAYS).toBe(7);
    for (const bad of ['0', '-1', 'never', '3651']) {
      expect(configError({ TAGTRAIL_EVENTS_RETENTION_DAYS: bad })).toMatch(
        /^invalid configuration:\n {2}TAGTRAIL_EVENTS_RETENTION_DAYS=/,
      );
    }
  });
});

describe('TAGTRAIL_METRICS_TOKEN', () => {
  it('is unset by default (GET /metrics is off)', () => {
    expect(loadConfig({}).TAGTRAIL_METRICS_TOKEN).toBeUndefined();
  });

  it('accepts a long printable token', () => {
    const token = 'a1B2-c3D4_e5F6.g7H8~i9';
    expect(loadConfig({ TAGTRAIL_METRICS_TOKEN: token }).TAGTRAIL_METRICS_TOKEN).toBe(token);
  });

  it.each([
    ['too short to resist guessing', 'short-secret'],
    ['with a space, which a bearer header cannot carry', 'abcdefgh ijklmnopq'],
    ['with a non-ASCII character', 'abcdefghijklmnopé'],
  ])('refuses a token %s, without printing it', (_why, token) => {
    const message = configError({ TAGTRAIL_METRICS_TOKEN: token });
    expect(message).toContain('TAGTRAIL_METRICS_TOKEN=(hidden)');
    expect(message).not.toContain(token);
  });
});

describe('URL settings with a password', () => {
  it.each([
    ['DATABASE_URL', 'postgres//tagtrail:Passw0rd-db@db.example.com/tagtrail'],
    ['REDIS_URL', 'redis//:RedisPassw0rd-31@127.0.0.1:6379/7'],
    ['MQTT_URL', 'mqt://svc:MqttPassw0rd@broker.example.com'],
    ['TAGTRAIL_SMTP_URL', 'smtp:/mailer:SmtpPassw0rd@mail.example.com'],
  ])('a mistyped %s is shown without its user information', (name, value) => {
    const message = configError({ [name]: value });
    expect(message).toContain(`${name}=`);
    expect(message).toContain('(hidden)@');
    expect(message).not.toMatch(/Passw0rd/);
  });
});

describe('URL settings that do not parse', () => {
  it.each([
    ['DATABASE_URL', 'postgres://tagtrail:Passw0rd-db@[db.example.com/tagtrail'],
    ['MQTT_URL', 'mqtt://svc:MqttPassw0rd@[broker'],
    ['REDIS_URL', 'redis://:RedisPassw0rd@[127.0.0.1:6379'],
    ['TAGTRAIL_SMTP_URL', 'smtp://mailer:SmtpPassw0rd@mail example.com'],
  ])('refuses %s at start, naming it, without its password', (name, value) => {
    const message = configError({ [name]: value });
    expect(message).toContain(`${name}=`);
    expect(message).toContain(': not a valid URL');
    expect(message).toContain('(hidden)@');
    expect(message).not.toMatch(/Passw0rd/);
  });

  it('takes URLs that parse', () => {
    const env = {
      DATABASE_URL: 'postgres://tagtrail:pw@[::1]:5432/tagtrail',
      MQTT_URL: 'mqtts://broker.example.com:8883',
      REDIS_URL: 'rediss://:pw@redis.example.com:6380/2',
      TAGTRAIL_SMTP_URL: 'smtp://mailer:pw@mail.example.com:587',
    };
    expect(loadConfig(env)).toMatchObject(env);
  });
});

describe('TAGTRAIL_PUBLIC_URL', () => {
  it('is unset unless given (links then point at the address the service announces)', () => {
    expect(loadConfig({}).TAGTRAIL_PUBLIC_URL).toBeUndefined();
  });

  it('takes an absolute http or https address and keeps its origin', () => {
    expect(loadConfig({ TAGTRAIL_PUBLIC_URL: 'https://Tagtrail.Example.com/' }).TAGTRAIL_PUBLIC_URL).toBe(
      'https://tagtrail.example.com',
    );
    expect(loadConfig({ TAGTRAIL_PUBLIC_URL: 'http://10.0.0.5:8080' }).TAGTRAIL_PUBLIC_URL).toBe(
      'http://10.0.0.5:8080',
    );
    expect(loadConfig({ TAGTRAIL_PUBLIC_URL: 'https://tagtrail.example.com:443' }).TAGTRAIL_PUBLIC_URL).toBe(
      'https://tagtrail.example.com',
    );
  });

  it.each([
    ['tagtrail.example.com', 'must be an absolute http or https URL'],
    ['/reset', 'must be an absolute http or https URL'],
    ['ftp://tagtrail.example.com', 'must be an absolute http or https URL'],
    ['https://tagtrail.example.com/?a=1', 'must not have a query or fragment'],
    ['https://tagtrail.example.com/#top', 'must not have a query or fragment'],
    ['https://tagtrail.example.com/?', 'must not have a query or fragment'],
    ['https://example.com/tagtrail', 'must not have a path: the web app is served at the root'],
  ])('refuses %j, saying why', (value, why) => {
    expect(configError({ TAGTRAIL_PUBLIC_URL: value })).toContain(
      `TAGTRAIL_PUBLIC_URL=${JSON.stringify(value)}: ${why}`,
    );
  });

  it('refuses a user name or password, without showing it', () => {
    const message = configError({ TAGTRAIL_PUBLIC_URL: 'https://admin:Passw0rd@tagtrail.example.com' });
    expect(message).toContain('TAGTRAIL_PUBLIC_URL="https://(hidden)@tagtrail.example.com": must not carry');
    expect(message).not.toMatch(/Passw0rd/);
  });
});

describe('TAGTRAIL_SECRET_KEYS', () => {
  const key = Buffer.alloc(32, 5).toString('base64');

  it('takes keys of 32 bytes in base64, comma-separated', () => {
    expect(loadConfig({ TAGTRAIL_SECRET_KEYS: `${key},${key}` }).TAGTRAIL_SECRET_KEYS).toBe(`${key},${key}`);
  });

  it.each([
    ['of 16 bytes', Buffer.alloc(16, 5).toString('base64')],
    ['that is not base64', 'this is not a key at all, is it?!'],
    ['second of two that is short', `${key},AAAA`],
  ])('refuses a key %s at start, without printing it', (_why, value) => {
    const message = configError({ TAGTRAIL_SECRET_KEYS: value });
    expect(message).toMatch(/TAGTRAIL_SECRET_KEYS: key \d is not 32 bytes/);
    expect(message).not.toContain(value.split(',').at(-1));
  });
});

describe('TAGTRAIL_SHUTDOWN_DRAIN_SECONDS', () => {
  // Its bounds and the values it refuses are the whole-number settings' table below.
  it('is 0 unless set: no drain, the stop begins at the signal', () => {
    expect(loadConfig({}).TAGTRAIL_SHUTDOWN_DRAIN_SECONDS).toBe(0);
    expect(loadConfig({ TAGTRAIL_SHUTDOWN_DRAIN_SECONDS: '' }).TAGTRAIL_SHUTDOWN_DRAIN_SECONDS).toBe(0);
    expect(loadConfig({ TAGTRAIL_SHUTDOWN_DRAIN_SECONDS: '30' }).TAGTRAIL_SHUTDOWN_DRAIN_SECONDS).toBe(30);
  });

  it('refuses a drain longer than five minutes, naming the variable', () => {
    expect(configError({ TAGTRAIL_SHUTDOWN_DRAIN_SECONDS: '301' })).toMatch(
      /^invalid configuration:\n {2}TAGTRAIL_SHUTDOWN_DRAIN_SECONDS="301": must be a whole number from 0 to 300/,
    );
  });
});

describe('whole-number settings', () => {
  // Every integer setting with its bounds (no maximum: null). Kept by hand so a new integer
  // setting fails the completeness check below until its bounds are tested here.
  const settings: [name: string, min: number, max: number | null][] = [
    ['DATABASE_POOL_SIZE', 2, 1000],
    ['PORT', 0, 65535],
    ['TAGTRAIL_MQTT_PORT', 0, 65535],
    ['TAGTRAIL_MQTTS_PORT', 0, 65535],
    ['TAGTRAIL_MQTT_MAX_CONNECTIONS', 1, 1000000],
    ['TAGTRAIL_MQTT_MAX_CONNECTIONS_PER_ADDRESS', 1, 1000000],
    ['TAGTRAIL_RAW_RETENTION_DAYS', 1, 3650],
    ['TAGTRAIL_ACTIVITY_RETENTION_DAYS', 1, 36500],
    ['TAGTRAIL_EVENTS_RETENTION_DAYS', 1, 3650],
    ['TAGTRAIL_RATE_LIMIT', 1, null],
    ['TAGTRAIL_RATE_WINDOW_SECONDS', 1, null],
    ['TAGTRAIL_BODY_LIMIT', 1024, null],
    ['TAGTRAIL_WEBHOOK_RATE_LIMIT', 1, null],
    ['TAGTRAIL_SESSION_RATE_LIMIT', 60, null],
    ['TAGTRAIL_HEADERS_TIMEOUT_SECONDS', 1, 300],
    ['TAGTRAIL_REQUEST_TIMEOUT_SECONDS', 1, 3600],
    ['TAGTRAIL_KEEP_ALIVE_TIMEOUT_SECONDS', 1, 3600],
    ['TAGTRAIL_HTTP_MAX_CONNECTIONS_PER_ADDRESS', 1, 1_000_000],
    ['TAGTRAIL_SHUTDOWN_DRAIN_SECONDS', 0, 300],
    ['TAGTRAIL_NOT_SEEN_AFTER_SECONDS', 60, 31_536_000],
  ];

  it('covers every integer setting of the schema', () => {
    expect(settings.map(([name]) => name).sort()).toEqual([...INTEGER_SETTINGS].sort());
  });

  const junk = ['1.5', '12.0', '12abc', '1e3', '0x10', '1,000', ' 12', '12 ', '+12', 'Infinity', 'NaN'];

  describe.each(settings)('%s', (name, min, max) => {
    const accepts =
      max === null
        ? `must be a whole number of at least ${min}`
        : `must be a whole number from ${min} to ${max}`;

    it.each(junk)('refuses %j at start, naming the variable and what it accepts', (value) => {
      expect(configError({ [name]: value })).toContain(`${name}=${JSON.stringify(value)}: ${accepts}`);
    });

    it('takes its bounds and refuses a number beyond them', () => {
      // The request timeout must be at least the headers timeout: that one at its least.
      const base: Record<string, string> =
        name === 'TAGTRAIL_REQUEST_TIMEOUT_SECONDS' ? { TAGTRAIL_HEADERS_TIMEOUT_SECONDS: '1' } : {};
      expect(loadConfig({ ...base, [name]: String(min) })[name as keyof ReturnType<typeof loadConfig>]).toBe(
        min,
      );
      expect(
        loadConfig({ ...base, [name]: `00${min + 1}` })[name as keyof ReturnType<typeof loadConfig>],
      ).toBe(min + 1);
      expect(configError({ ...base, [name]: String(min - 1) })).toContain(`${name}="${min - 1}": ${accepts}`);
      if (max !== null) {
        expect(
          loadConfig({ ...base, [name]: String(max) })[name as keyof ReturnType<typeof loadConfig>],
        ).toBe(max);
        expect(configError({ ...base, [name]: String(max + 1) })).toContain(
          `${name}="${max + 1}": ${accepts}`,
        );
      } else {
        // Past what a JavaScript number holds exactly: refused rather than rounded.
        expect(configError({ ...base, [name]: '99999999999999999999' })).toContain(
          `${name}="99999999999999999999": ${accepts}`,
        );
      }
    });
  });
});
