import type { FastifyBaseLogger } from 'fastify';
import { SessionSweeper } from './accounts/session-sweeper.js';
import { ActivitySweeper } from './activity/sweeper.js';
import { buildServer } from './app.js';
import { AssetCountCompactor } from './assets/count-compactor.js';
import { buildInfo } from './build-info.js';
import { type Config, tlsFiles } from './config.js';
import { openDatabase } from './db/connect.js';
import type { EmbeddedPostgres } from './db/embedded.js';
import { waitingLine } from './db/embedded-owner.js';
import { FirstAnalyze } from './db/first-analyze.js';
import { DISK_FULL_ADVICE } from './db/postmaster-log.js';
import { serverSettings, settingsWarnings } from './db/server-settings.js';
import { eventBacklog } from './events/backlog.js';
import type { DeliveryWorker } from './events/delivery-worker.js';
import { EventsRetention } from './events/retention.js';
import { LameDuck } from './http/drain.js';
import { databaseReadiness } from './http/health.js';
import type { App } from './http/server.js';
import { replaceCertificate } from './http/tls.js';
import type { EmbeddedBroker } from './ingest/broker.js';
import { BrokerAccess, SERVICE_USERNAME } from './ingest/broker-access.js';
import { BrokerIngest } from './ingest/broker-ingest.js';
import { type BrokerAddress, externalBrokerAddress, startBrokerOnPort } from './ingest/broker-port.js';
import { type IngestTransport, startIngestTransport } from './ingest/transport.js';
import { hostUnusable } from './listen-errors.js';
import { ServiceMetrics } from './metrics/index.js';
import { loadSecretBox } from './secrets/key-ring.js';
import { createServices } from './services.js';
import { CertificateReloader, type ReloadOutcome, type TlsListener } from './tls/reloader.js';
import { describeCertificate, expiryNote, isLoopbackHost } from './tls/tls-files.js';

/** Deliveries a gone worker had claimed, sent now; a failure only leaves them to their leases. */
async function releaseOrphanedLeases(worker: DeliveryWorker, log: FastifyBaseLogger): Promise<void> {
  try {
    const released = await worker.releaseOrphanedLeases();
    if (released > 0) {
      log.info(
        { released },
        'webhook deliveries claimed by an earlier run (or by the service a restored backup was taken of) are sent now, not when their leases run out',
      );
    }
  } catch (err) {
    log.warn(
      { err },
      'could not release the leases of earlier runs; those deliveries are sent when the leases run out',
    );
  }
}

/** The embedded server's supervision in the service log: an operator sees each crash and restart. */
function watchEmbeddedDatabase(embedded: EmbeddedPostgres, log: FastifyBaseLogger): void {
  embedded.watch((event) => {
    if (event.kind === 'exited') {
      log.error(
        { code: event.code, signal: event.signal, failure: event.failure },
        event.diskFull
          ? `embedded PostgreSQL exited: ${DISK_FULL_ADVICE}; restarting it until it can write`
          : 'embedded PostgreSQL exited; restarting it',
      );
    } else if (event.kind === 'restart-failed') {
      log.warn(
        { attempt: event.attempt, err: event.error },
        event.diskFull
          ? 'embedded PostgreSQL did not restart yet: the disk holding the data directory is full; retrying'
          : 'embedded PostgreSQL did not restart yet; retrying',
      );
    } else {
      log.warn(
        { attempts: event.attempts, down_ms: event.downMs },
        'embedded PostgreSQL restarted; serving again',
      );
    }
  });
}

/** The TLS listeners this start opened, with their certificates logged, ready to be reloaded. */
function certificateReloader(
  config: Config,
  app: App,
  broker: EmbeddedBroker | undefined,
): CertificateReloader {
  const files = tlsFiles(config);
  const listeners: TlsListener[] = [];
  if (config.httpTls) {
    listeners.push({
      name: 'https',
      files: files.http,
      current: config.httpTls,
      apply: (pair) => replaceCertificate(app.server, pair),
    });
  }
  if (broker && config.mqttTls) {
    listeners.push({
      name: 'mqtts',
      files: files.mqtt,
      current: config.mqttTls,
      apply: (pair) => broker.replaceCertificate(pair),
    });
  }
  const log = app.log.child({ component: 'tls' });
  for (const listener of listeners) {
    const certificate = describeCertificate(listener.current.cert);
    const note = expiryNote(certificate.expires_in_days);
    if (note) {
      log.warn({ listener: listener.name, ...certificate }, `TLS certificate ${note}; renew it`);
    } else {
      log.info({ listener: listener.name, ...certificate }, 'TLS certificate');
    }
  }
  return new CertificateReloader(listeners, log);
}

export interface RunningService {
  url: string;
  /** The broker readers publish to: `MQTT_URL`, or the embedded broker's URL. */
  mqttUrl: string;
  /** Where readers publish, for the start-up lines: the broker's real address. */
  broker: BrokerAddress;
  /** The service's own login on the embedded broker (it may subscribe to every topic). */
  brokerLogin?: { username: string; password: string };
  /** Reader messages in: the embedded broker's hook or the MQTT_URL consumer, and raw-log upkeep. */
  ingest: IngestTransport;
  /**
   * Reads the TLS listeners' certificate and key files again and serves those that changed
   * (SIGHUP; also checked every minute). Empty without TLS.
   */
  reloadTls(): ReloadOutcome[];
  /**
   * The lame duck before the stop (TAGTRAIL_SHUTDOWN_DRAIN_SECONDS): /readyz answers 503 and
   * every response closes its connection, while every route, ingest and the background work
   * go on. Resolves when that time has passed, or at once when `stop` is called (which cuts
   * the drain short) or the setting is 0 (nothing changes then). Does not stop by itself.
   */
  drain(): Promise<void>;
  /** Stops everything; during a drain, ends it first. */
  stop(): Promise<void>;
}

/**
 * Starts the whole service: the embedded MQTT broker (unless MQTT_URL), the database
 * (embedded unless DATABASE_URL), migrations, HTTP. The broker goes first so that a taken
 * TAGTRAIL_MQTT_PORT fails before a database server is started; while the start waits for
 * another process's server it closes every new connection, and a reader that connects
 * while the database starts waits for it (at most the broker's connect timeout). `stop`
 * first stops ingest (no new reader messages; those in flight are stored), then closes in
 * reverse order: stop accepting and finish requests in flight, then the broker, then the
 * stores, then the database.
 */
export interface StartOptions {
  /** A line for the operator while starting (serve prints it on standard error). */
  onNotice?: (line: string) => void;
  /**
   * Ends the start while it waits for the database (another process's server, or its own
   * starting): the start unwinds and rejects with an AbortError. Later steps do not look.
   */
  signal?: AbortSignal;
}

export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  // What has been started so far, closed in reverse when a later step fails.
  const started: Array<() => Promise<void>> = [];
  const unwind = async () => {
    for (const close of started.reverse()) await close().catch(() => undefined);
  };
  try {
    // With the embedded broker, a reader's message is stored before the broker acknowledges it.
    const brokerIngest = config.MQTT_URL ? undefined : new BrokerIngest();
    // Every client of the embedded broker logs in: readers with their own credentials.
    const brokerAccess = brokerIngest ? new BrokerAccess() : undefined;
    const placed = brokerIngest
      ? await startBrokerOnPort({
          host: config.HOST,
          port: config.TAGTRAIL_MQTT_PORT,
          onPublish: (topic, payload, sender, done) => brokerIngest.take(topic, payload, sender, done),
          onRefusedPacket: (sender, err) =>
            brokerIngest.refused(sender, `MQTT message refused, connection closed: ${err.message} bytes`),
          access: brokerAccess,
          tls: config.mqttTls && { ...config.mqttTls, port: config.TAGTRAIL_MQTTS_PORT },
          connectionLimits: {
            total: config.TAGTRAIL_MQTT_MAX_CONNECTIONS,
            perAddress: config.TAGTRAIL_MQTT_MAX_CONNECTIONS_PER_ADDRESS,
          },
        })
      : undefined;
    const broker = placed?.broker;
    const brokerAddress = placed?.address ?? externalBrokerAddress(config.MQTT_URL as string);
    if (broker) started.push(() => broker.stop());
    if (brokerIngest) started.push(() => brokerIngest.close());
    const opened = await openDatabase(config, {
      role: 'service',
      onWait: (owner) => {
        options.onNotice?.(waitingLine(config.dataDir, owner));
        // For as long as the other process runs: readers reconnect later (closeNewConnections).
        broker?.closeNewConnections(true);
      },
      onNotice: options.onNotice,
      signal: options.signal,
    });
    broker?.closeNewConnections(false);
    started.push(() => opened.close());
    const metrics = new ServiceMetrics();
    metrics.describeBuild(buildInfo());
    const secretKeys = await loadSecretBox(config);
    const services = await createServices(
      opened.db,
      { ...config, broker: brokerAddress, readerPresence: brokerAccess, secrets: secretKeys.box },
      undefined,
      metrics,
    );
    if (brokerAccess) metrics.watchBroker(() => brokerAccess.connectedReaders().size);
    metrics.watchEvents(() => eventBacklog(opened.db));
    started.push(() => services.close());
    let ingest: IngestTransport | undefined;
    const lameDuck = new LameDuck();
    const app = await buildServer(services, {
      lameDuck,
      bodyLimit: config.TAGTRAIL_BODY_LIMIT,
      connection: {
        headersTimeoutMs: config.TAGTRAIL_HEADERS_TIMEOUT_SECONDS * 1000,
        requestTimeoutMs: config.TAGTRAIL_REQUEST_TIMEOUT_SECONDS * 1000,
        keepAliveTimeoutMs: config.TAGTRAIL_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
        maxConnectionsPerAddress: config.TAGTRAIL_HTTP_MAX_CONNECTIONS_PER_ADDRESS,
      },
      logger: { level: config.LOG_LEVEL },
      tls: config.httpTls,
      metricsToken: config.TAGTRAIL_METRICS_TOKEN,
      readiness: [
        databaseReadiness(opened.db),
        // The embedded broker accepts readers; an external one has our consumer connected. An
        // instance that consumes nothing (TAGTRAIL_MQTT_CONSUME=false) needs no broker to serve.
        ...(broker || config.TAGTRAIL_MQTT_CONSUME
          ? [
              {
                name: 'broker',
                check: async () => (broker ? broker.listening : (ingest?.consumer?.connected ?? false)),
              },
            ]
          : []),
      ],
    });
    started.push(() => app.close());
    // Compiles every route's schemas: synchronous work that takes seconds on a loaded machine
    // (7 s with three instances starting at once on 2 cores). Done before ingest and the
    // background work start, or their database connections wait out their 5 s timeout on
    // the blocked event loop and every start logs a burst of "database unavailable".
    await app.ready();
    if (secretKeys.box.sealingKeyId === null) {
      app.log.warn(
        'TAGTRAIL_SECRET_KEYS is not set: webhook signing secrets, two-factor secrets and the token signing key are stored unsealed in the database (docs/operations.md, "Secrets at rest")',
      );
    } else {
      app.log.info({ keys: secretKeys.box.keyIds, source: secretKeys.source }, 'stored secrets sealed');
    }
    const databaseLog = app.log.child({ component: 'database' });
    if (opened.embedded) watchEmbeddedDatabase(opened.embedded, databaseLog);
    // Advice only: a server that will not say does not stop the start.
    const settings = await serverSettings(opened.db.pool).catch((err: unknown) => {
      databaseLog.warn({ err }, 'could not read the database server settings (autovacuum, track_counts)');
      return null;
    });
    for (const warning of settings ? settingsWarnings(settings) : []) databaseLog.warn(warning);
    ingest = await startIngestTransport({
      db: opened.db,
      readers: services.readers,
      ingest: services.ingest,
      config,
      logger: app.log.child({ component: 'ingest' }),
      brokerIngest,
      brokerAccess,
    });
    const transport = ingest;
    const consumer = transport.consumer;
    if (consumer) metrics.watchConsumer(() => consumer.connected);
    started.push(() => transport.stop());
    const sessionSweeper = new SessionSweeper(
      services.internal.sessions,
      app.log.child({ component: 'sessions' }),
    );
    sessionSweeper.start();
    started.push(() => sessionSweeper.stop());
    // Webhook deliveries and live notices; ingest only writes events and never waits for these.
    const events = services.internal.events;
    const eventsLog = app.log.child({ component: 'events' });
    // On its own embedded database the service is the only one (another waits for it to
    // exit: embedded-owner.ts), so every lease there is of a worker that is gone.
    if (opened.embedded?.owned) await releaseOrphanedLeases(events.worker, eventsLog);
    events.start((err) => eventsLog.warn({ err }, 'events: background work failed; it is retried'));
    started.push(() => events.stop());
    const activitySweeper = new ActivitySweeper(
      services.internal.activity,
      config.TAGTRAIL_ACTIVITY_RETENTION_DAYS,
      app.log.child({ component: 'activity' }),
    );
    activitySweeper.start();
    started.push(() => activitySweeper.stop());
    const eventsRetention = new EventsRetention(opened.db, config.TAGTRAIL_EVENTS_RETENTION_DAYS, eventsLog);
    eventsRetention.start();
    started.push(() => eventsRetention.stop());
    const assetCounts = new AssetCountCompactor(opened.db, app.log.child({ component: 'assets' }));
    assetCounts.start();
    started.push(() => assetCounts.stop());
    const firstAnalyze = new FirstAnalyze(opened.db, app.log.child({ component: 'database' }));
    firstAnalyze.start();
    started.push(() => firstAnalyze.stop());
    try {
      await app.listen({ port: config.PORT, host: config.HOST });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new Error(`port ${config.PORT} on ${config.HOST} is in use; set PORT to another port`);
      }
      throw hostUnusable(err, config.HOST) ?? err;
    }
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    if (!config.httpTls && !config.TAGTRAIL_TRUST_PROXY && !isLoopbackHost(config.HOST)) {
      app.log.warn(
        { host: config.HOST },
        'serving plain HTTP beyond this machine: API keys and session cookies cross the network in clear; set TAGTRAIL_TLS_CERT and TAGTRAIL_TLS_KEY, or put a TLS proxy in front and set TAGTRAIL_TRUST_PROXY=true (docs/operations.md, "HTTPS and renewing certificates")',
      );
    }
    const url = `${config.httpTls ? 'https' : 'http'}://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
    const publicAddress = services.internal.publicAddress;
    publicAddress.listening(url);
    // Reachable from elsewhere, or behind a proxy (whose address people use): links to this
    // machine's own address would lead nowhere for them.
    if (!publicAddress.isConfigured && (config.TAGTRAIL_TRUST_PROXY || !isLoopbackHost(config.HOST))) {
      app.log.warn(
        { host: config.HOST, links: publicAddress.base },
        'TAGTRAIL_PUBLIC_URL is not set: password reset and invitation links point at this service\'s own address, which people on other machines or behind the proxy may not reach; set it to the address they use (docs/operations.md, "Public address")',
      );
    }
    const certificates = certificateReloader(config, app, broker);
    if (certificates.active) metrics.watchCertificates(() => certificates.served());
    certificates.start();
    started.push(async () => certificates.stop());
    let stopping: Promise<void> | undefined;
    let draining: Promise<void> | undefined;
    let endDrain: (() => void) | undefined;
    return {
      url,
      mqttUrl: broker?.url ?? (config.MQTT_URL as string),
      broker: brokerAddress,
      brokerLogin: brokerAccess && { username: SERVICE_USERNAME, password: brokerAccess.servicePassword },
      ingest: transport,
      reloadTls: () => certificates.reload(),
      drain() {
        const seconds = config.TAGTRAIL_SHUTDOWN_DRAIN_SECONDS;
        if (seconds === 0 || stopping) return Promise.resolve();
        draining ??= new Promise<void>((resolve) => {
          lameDuck.begin();
          app.log.info(
            { drain_seconds: seconds },
            'draining before the stop: /readyz answers 503 and responses close their connections',
          );
          const timer = setTimeout(resolve, seconds * 1000);
          endDrain = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        return draining;
      },
      stop() {
        endDrain?.();
        stopping ??= (async () => {
          certificates.stop();
          await transport.stop();
          await sessionSweeper.stop();
          await events.stop();
          await activitySweeper.stop();
          await eventsRetention.stop();
          await assetCounts.stop();
          await firstAnalyze.stop();
          await app.close();
          await broker?.stop();
          await services.close();
          await opened.close();
        })();
        return stopping;
      },
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}
