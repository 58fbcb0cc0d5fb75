import type { Database } from '../db/pool.js';
import { waitUntilAvailable } from '../db/unavailable.js';
import { hideUserInfo } from '../url-user-info.js';
import type { BrokerAccess } from './broker-access.js';
import type { BrokerIngest } from './broker-ingest.js';
import { ReaderDirectory } from './directory.js';
import type { IngestLogger } from './limiter.js';
import { MqttConsumer } from './mqtt-consumer.js';
import { RawCompaction } from './raw-compaction.js';
import type { ReaderService } from './readers-service.js';
import { RawRetention } from './retention.js';
import type { IngestService } from './service.js';

export interface IngestTransportConfig {
  /** External broker; unset when the embedded broker is in use (pass `brokerIngest`). */
  MQTT_URL?: string;
  TAGTRAIL_MQTT_SHARED_GROUP?: string;
  /** false: no consumer of MQTT_URL (an instance for the API alone); default true. */
  TAGTRAIL_MQTT_CONSUME?: boolean;
  TAGTRAIL_INSTANCE?: string;
  TAGTRAIL_RAW_RETENTION_DAYS: number;
  /** The consumer's login on MQTT_URL, unless the URL carries one (mqtt://user:password@host). */
  TAGTRAIL_MQTT_USERNAME?: string;
  TAGTRAIL_MQTT_PASSWORD?: string;
}

export interface IngestTransportDeps {
  db: Database;
  readers: ReaderService;
  ingest: IngestService;
  config: IngestTransportConfig;
  logger: IngestLogger;
  /** The embedded broker's publish hook, when the service runs its own broker. */
  brokerIngest?: BrokerIngest;
  /** The embedded broker's access control: readers log in against the reader directory. */
  brokerAccess?: BrokerAccess;
  /** How long to wait for an external broker at start before going on in the background. */
  connectWaitMs?: number;
}

export interface IngestTransport {
  directory: ReaderDirectory;
  /** Set with an external broker (MQTT_URL). */
  consumer?: MqttConsumer;
  retention: RawRetention;
  /** Merges the raw log's small rows once their time has passed (./raw-compaction.ts). */
  compaction: RawCompaction;
  /** Resolves once messages on `topic` are taken in (subscribed, or known to the embedded broker's hook). */
  serving(topic: string, timeoutMs?: number): Promise<void>;
  /** Stops taking messages and waits for those in flight; call before the database closes. */
  stop(): Promise<void>;
}

/** The MQTT client id of this instance: `tagtrail-ingest`, or `tagtrail-ingest-<TAGTRAIL_INSTANCE>`. */
export const consumerClientId = (instance?: string) =>
  instance ? `tagtrail-ingest-${instance}` : 'tagtrail-ingest';

/**
 * The consumer's login on an external broker: the user name and password in MQTT_URL
 * when it has them (percent-decoded), else TAGTRAIL_MQTT_USERNAME and
 * TAGTRAIL_MQTT_PASSWORD, else none (a broker that allows anonymous clients). `auth` is
 * cleared so that mqtt.js does not split the URL's user info itself (it splits at the
 * last colon and would misread a password containing one).
 */
export function consumerLogin(config: IngestTransportConfig): {
  auth: undefined;
  username?: string;
  password?: string;
} {
  const url = config.MQTT_URL ? new URL(config.MQTT_URL) : undefined;
  const username = url?.username ? decodeURIComponent(url.username) : config.TAGTRAIL_MQTT_USERNAME;
  const password = url?.username ? decodeURIComponent(url.password) : config.TAGTRAIL_MQTT_PASSWORD;
  return {
    auth: undefined,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
  };
}

/**
 * Starts what brings reader messages in: the raw log's partition upkeep, the reader
 * directory (reader webhooks use it too), and either the embedded broker's hook or a
 * consumer of MQTT_URL, unless TAGTRAIL_MQTT_CONSUME is false.
 */
export async function startIngestTransport(deps: IngestTransportDeps): Promise<IngestTransport> {
  const { db, readers, ingest, config, logger, brokerIngest } = deps;
  const retention = new RawRetention(db, { retentionDays: config.TAGTRAIL_RAW_RETENTION_DAYS, logger });
  await retention.start();
  const compaction = new RawCompaction(db, { logger });
  // Not waited for: a first pass after a long stop may have an hour of rows to merge.
  void compaction.start();
  const directory = new ReaderDirectory({ source: () => readers.liveTopics(), pool: db.pool, logger });
  try {
    await directory.start();
  } catch (err) {
    await Promise.all([retention.stop(), compaction.stop()]);
    throw err;
  }

  let consumer: MqttConsumer | undefined;
  if (brokerIngest) {
    if (config.TAGTRAIL_MQTT_SHARED_GROUP) {
      logger.warn(
        { group: config.TAGTRAIL_MQTT_SHARED_GROUP },
        'TAGTRAIL_MQTT_SHARED_GROUP applies to an external broker (MQTT_URL) only; ignored',
      );
    }
    brokerIngest.attach({ directory, ingest, logger, instruments: ingest.instruments });
    deps.brokerAccess?.attach(directory, logger);
  } else if (config.MQTT_URL && config.TAGTRAIL_MQTT_CONSUME === false) {
    logger.info(
      { url: hideUserInfo(config.MQTT_URL) },
      'not taking reader messages from the MQTT broker (TAGTRAIL_MQTT_CONSUME=false): the instances that consume store them',
    );
  } else if (config.MQTT_URL) {
    consumer = new MqttConsumer({
      url: config.MQTT_URL,
      clientId: consumerClientId(config.TAGTRAIL_INSTANCE),
      sharedGroup: config.TAGTRAIL_MQTT_SHARED_GROUP,
      directory,
      ingest,
      logger,
      databaseAvailable: (signal) => waitUntilAvailable(() => db.ping(2_000), signal),
      instruments: ingest.instruments,
      clientOptions: consumerLogin(config),
    });
    consumer.start();
    // Wait a little so that a reachable broker is subscribed when the service says it is up;
    // an unreachable one must not stop the service: the consumer keeps trying.
    const waited = await Promise.race([
      consumer.firstAttempt(),
      new Promise<boolean>((resolve) =>
        setTimeout(() => resolve(false), deps.connectWaitMs ?? 3_000).unref(),
      ),
    ]);
    if (!waited)
      logger.warn(
        { url: hideUserInfo(String(config.MQTT_URL)) },
        'MQTT broker not reachable yet; still trying',
      );
  }

  let stopping: Promise<void> | undefined;
  return {
    directory,
    consumer,
    retention,
    compaction,
    async serving(topic, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      await directory.refresh();
      for (;;) {
        const known = directory.lookup(topic) !== undefined;
        if (known && (!consumer || consumer.isSubscribed(topic))) return;
        if (Date.now() > deadline) throw new Error(`topic ${topic} is not served after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop() {
      stopping ??= (async () => {
        await consumer?.stop();
        deps.brokerAccess?.detach();
        await brokerIngest?.close();
        await directory.stop();
        await Promise.all([retention.stop(), compaction.stop()]);
      })();
      return stopping;
    },
  };
}
