/**
 * Load for the restart tests: API writes (POST /api/v1/assets) and reader messages (MQTT
 * QoS 1) kept going while the database goes away and comes back, recording what the
 * service acknowledged so the test can check that none of it was lost.
 */
import { randomBytes } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { cliCaller } from '../../src/caller.js';
import { createDatabase, type Database } from '../../src/db/pool.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { connectMqtt } from '../../src/ingest/mqtt-connection.js';
import type { MqttCredentials } from '../../src/ingest/readers-service.js';
import { createServices } from '../../src/services.js';
import { TEST_SECRETS } from '../helpers/secrets.js';

export const unique = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

export interface Tenant {
  orgId: number;
  token: string;
  readerId: number;
  topic: string;
  /** The reader's login on the embedded broker. */
  mqtt: MqttCredentials;
}

/** An organization with an API key and a generic-json reader, created on the service's database. */
export async function createTenant(databaseUrl: string): Promise<Tenant> {
  const db = createDatabase(databaseUrl, { max: 2 });
  const services = await createServices(
    db,
    {
      TAGTRAIL_ENV: 'production',
      secrets: TEST_SECRETS,
      REDIS_URL: undefined,
      TAGTRAIL_RATE_LIMIT: 1000,
      TAGTRAIL_RATE_WINDOW_SECONDS: 60,
    },
    new MemoryRateLimitStore({ limit: 1000, windowSeconds: 60 }),
  );
  try {
    const org = await services.organizations.create(unique('Outage Org'));
    const { token } = await services.keys.mint({
      caller: cliCaller(org.id),
      scopes: ['assets:read', 'assets:write'],
    });
    const topic = `tagtrail-test/${unique('outage')}/reads`;
    const { reader, mqtt } = await services.readers.create(cliCaller(org.id), {
      family: 'generic-json',
      identity: unique('outage-reader'),
      topic,
    });
    return { orgId: org.id, token, readerId: reader.id, topic, mqtt };
  } finally {
    await services.close();
    await db.close();
  }
}

/** One reader message; its tag names it, so each is told apart in the raw log. */
export const readerMessage = (n: string) => JSON.stringify({ reads: [{ tag: `OUTAGE-${n}` }] });

/** The raw-log payloads stored for a reader. */
export async function storedMessages(db: Database, readerId: number): Promise<Set<string>> {
  const { rows } = await db.pool.query<{ payload: string }>(
    'SELECT payload FROM raw_log WHERE reader_id = $1',
    [readerId],
  );
  return new Set(rows.map((r) => r.payload));
}

/** Polls until `check` holds; the test's timeout bounds the wait. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface WriteLoad {
  /** Assets the service answered 201 for. */
  created: Array<{ id: number; name: string }>;
  /** Every answer in order: status codes, or `error: …` for a failed request. */
  answers: Array<number | string>;
  /** When each answer came (Date.now()), for the figures in docs/operations.md. */
  answeredAt: number[];
  /** Answers that were neither 201 nor a well-formed 503 (status 503, envelope, Retry-After). */
  unexpected: string[];
  /** 201s since the first 503. */
  createdAfterOutage(): number;
  stop(): Promise<void>;
}

/** `workers` loops of POST /api/v1/assets, each waiting for its answer before the next. */
export function startWriteLoad(baseUrl: string, token: string, workers = 3): WriteLoad {
  let running = true;
  let firstOutageAt = -1;
  const load: WriteLoad = {
    created: [],
    answers: [],
    answeredAt: [],
    unexpected: [],
    createdAfterOutage: () =>
      firstOutageAt < 0 ? 0 : load.answers.slice(firstOutageAt).filter((a) => a === 201).length,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
  const worker = async (w: number) => {
    for (let i = 0; running; i++) {
      const name = unique(`outage-asset-${w}-${i}`);
      try {
        const res = await fetch(`${baseUrl}/api/v1/assets`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
          signal: AbortSignal.timeout(60_000),
        });
        const body = (await res.json()) as { data?: { id: number }; error?: { type: string } };
        load.answers.push(res.status);
        load.answeredAt.push(Date.now());
        if (res.status === 201 && body.data) {
          load.created.push({ id: body.data.id, name });
        } else if (
          res.status === 503 &&
          body.error?.type === 'service_unavailable' &&
          res.headers.get('retry-after')
        ) {
          if (firstOutageAt < 0) firstOutageAt = load.answers.length - 1;
          // A client honouring Retry-After would wait; a short pause keeps the load on.
          await new Promise((resolve) => setTimeout(resolve, 50));
        } else {
          load.unexpected.push(`${res.status} ${JSON.stringify(body)}`);
        }
      } catch (err) {
        load.answers.push(`error: ${(err as Error).message}`);
        load.answeredAt.push(Date.now());
        load.unexpected.push(`request failed: ${(err as Error).message}`);
      }
    }
  };
  const loops = Array.from({ length: workers }, (_, w) => worker(w));
  return load;
}

export interface ReaderLoad {
  /** Payloads the broker acknowledged (PUBACK), in order. */
  acknowledged: string[];
  stop(): Promise<void>;
}

/**
 * A reader publishing at QoS 1, `inFlight` messages at a time with `pauseMs` between two,
 * as a fixed reader does (at most some 50 messages a second by default). Its MQTT client
 * keeps an unacknowledged message and sends it again after a reconnect. The pace matters
 * with an external broker: it acknowledges the reader at once and queues for our consumer
 * during an outage, and Mosquitto drops what exceeds its queue (max_queued_messages,
 * 1000 by default), which no consumer can get back (docs/operations.md).
 */
export async function startReaderLoad(
  mqttUrl: string,
  topic: string,
  {
    inFlight = 2,
    pauseMs = 40,
    login,
  }: { inFlight?: number; pauseMs?: number; login?: MqttCredentials } = {},
): Promise<ReaderLoad> {
  const client: MqttClient = await connectMqtt(mqttUrl, unique(login?.username ?? 'tagtrail-outage-reader'), {
    reconnectPeriod: 200,
    ...(login ? { username: login.username, password: login.password } : {}),
  });
  let running = true;
  const load: ReaderLoad = {
    acknowledged: [],
    stop: async () => {
      running = false;
      await Promise.all(loops);
      await client.endAsync();
    },
  };
  const worker = async (w: number) => {
    for (let i = 0; running; i++) {
      const payload = readerMessage(`${w}-${i}-${randomBytes(3).toString('hex')}`);
      // mqtt.js rejects a publish when the connection drops while it replays its session; the
      // broker never acknowledged it, so the reader sends it again, as a real reader does.
      for (;;) {
        try {
          await client.publishAsync(topic, payload, { qos: 1 });
          break;
        } catch (err) {
          if (!String(err).includes('Connection closed')) throw err;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      load.acknowledged.push(payload);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  };
  const loops = Array.from({ length: inFlight }, (_, w) => worker(w));
  return load;
}

/**
 * The outage as the API clients saw it, relative to `from` (the kill, or the start of the
 * restart), in ms: first and last 503, first 201 after the first 503. Printed when
 * TAGTRAIL_OUTAGE_FIGURES is set, for docs/operations.md; never asserted.
 */
export function reportFigures(
  name: string,
  load: WriteLoad,
  from: number,
  extra: Record<string, number> = {},
) {
  if (!process.env.TAGTRAIL_OUTAGE_FIGURES) return;
  const first503 = load.answers.indexOf(503);
  const last503 = load.answers.lastIndexOf(503);
  const firstBack = load.answers.findIndex((a, i) => i > first503 && a === 201);
  const at = (i: number) => (i < 0 ? null : (load.answeredAt[i] as number) - from);
  const figures = {
    first_503_ms: at(first503),
    last_503_ms: at(last503),
    first_201_after_ms: at(firstBack),
    answers_503: load.answers.filter((a) => a === 503).length,
    answers_201: load.created.length,
    ...extra,
  };
  process.stderr.write(`outage figures (${name}): ${JSON.stringify(figures)}\n`);
}
