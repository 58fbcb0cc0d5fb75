import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { WebhookInstruments } from '../events/instruments.js';
import type { HttpMetrics } from '../http/metrics.js';
import type { IngestInstruments } from '../ingest/instruments.js';
import { ingestInstruments } from './ingest.js';
import { TalliedHistogram } from './tally.js';
import { webhookInstruments } from './webhooks.js';

/** The counts pg.Pool keeps (its totalCount, idleCount and waitingCount). */
export interface PoolCounts {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

/** Seconds: the API answers in milliseconds; exports and imports may take many seconds. */
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds an event stream stays open: a reload ends one at once, a session lasts 12 hours. */
const STREAM_BUCKETS = [1, 10, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 43200];

/**
 * Every series of docs/metrics.md in one registry per service (not prom-client's global
 * one, so several services in one process, as in tests, keep their own counts). Gauges of
 * state owned elsewhere (the pool, the broker) are read when scraped, never pushed.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly ingest: IngestInstruments;
  readonly http: HttpMetrics;
  readonly webhooks: WebhookInstruments;

  constructor(options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    // Node's own series (CPU, memory, event loop lag, GC) under their usual names, which
    // ready-made Node.js dashboards expect.
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.ingest = ingestInstruments(this.registry);
    this.webhooks = webhookInstruments(this.registry);
    // Observed once per request: tallied, not prom-client's own (./tally.ts).
    const requests = new TalliedHistogram({
      name: 'tagtrail_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status, and how long each took to answer',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    // Event streams (GET /internal/live) move these a few times a minute: prom-client's own.
    const openStreams = new Gauge({
      name: 'tagtrail_http_open_streams',
      help: 'Event streams (GET /internal/live) open now',
      registers,
    });
    const streams = new Histogram({
      name: 'tagtrail_http_stream_duration_seconds',
      help: 'Event streams ended, by route pattern and why they ended, and how long each was open',
      labelNames: ['route', 'reason'],
      buckets: STREAM_BUCKETS,
      registers,
    });
    this.http = {
      observeRequest: ({ method, route, status, seconds }) =>
        requests.observe([method, route, String(status)], seconds),
      streamsOpen: (change) => openStreams.inc(change),
      observeStreamEnd: ({ route, reason, seconds }) => streams.observe({ route, reason }, seconds),
      render: async () => ({ contentType: this.registry.contentType, body: await this.registry.metrics() }),
    };
  }

  /** The database pools whose connections and waiting clients are reported (summed). */
  watchPool(...pools: PoolCounts[]): void {
    const pool = {
      get totalCount() {
        return pools.reduce((n, p) => n + p.totalCount, 0);
      },
      get idleCount() {
        return pools.reduce((n, p) => n + p.idleCount, 0);
      },
      get waitingCount() {
        return pools.reduce((n, p) => n + p.waitingCount, 0);
      },
    };
    this.gauge(
      'tagtrail_db_pool_connections',
      'Connections the database pool holds, busy and idle',
      () => pool.totalCount,
    );
    this.gauge(
      'tagtrail_db_pool_idle_connections',
      'Connections of the pool not in use',
      () => pool.idleCount,
    );
    this.gauge(
      'tagtrail_db_pool_waiting_clients',
      'Transactions waiting for a pool connection because every connection is busy',
      () => pool.waitingCount,
    );
  }

  /**
   * Write transactions run again after PostgreSQL aborted them to break a deadlock
   * (src/db/transient-conflict.ts): a count kept by the database layer, read at each scrape.
   */
  watchTransactionRetries(read: () => number): void {
    const name = 'tagtrail_db_transaction_retries_total';
    this.registry.removeSingleMetric(name);
    let counted = 0;
    new Counter({
      name,
      help: 'Write transactions run again after the database aborted them to break a deadlock',
      registers: [this.registry],
      collect() {
        const now = read();
        if (now > counted) this.inc(now - counted);
        counted = now;
      },
    });
  }

  /** The embedded broker: how many readers are logged in to it. */
  watchBroker(connectedReaders: () => number): void {
    this.gauge(
      'tagtrail_broker_connected_readers',
      'Readers logged in to the embedded MQTT broker',
      connectedReaders,
    );
  }

  /** The consumer of an external broker (MQTT_URL). */
  watchConsumer(connected: () => boolean): void {
    this.gauge(
      'tagtrail_mqtt_consumer_connected',
      '1 while the ingest consumer is connected to the external broker, else 0',
      () => (connected() ? 1 : 0),
    );
  }

  /**
   * Always 1, labelled with the build's version and the newest migration it ships: which
   * build each instance runs, during an upgrade, and a marker on dashboards when it changed.
   */
  describeBuild(build: { version: string; schema: string }): void {
    const name = 'tagtrail_build_info';
    this.registry.removeSingleMetric(name);
    new Gauge({
      name,
      help: 'Always 1: the version of tagtrail this instance runs and the newest database migration it ships',
      labelNames: ['version', 'schema'],
      registers: [this.registry],
    }).set(build, 1);
  }

  /**
   * When each TLS listener's certificate ends (Unix seconds), as served now: the series to
   * alert on before a renewal that did not happen lets it lapse.
   */
  watchCertificates(read: () => Array<{ listener: string; notAfter: Date }>): void {
    const name = 'tagtrail_tls_certificate_expiry_timestamp_seconds';
    this.registry.removeSingleMetric(name);
    new Gauge({
      name,
      help: 'When the certificate each TLS listener (https, mqtts) serves ends, in Unix seconds',
      labelNames: ['listener'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { listener, notAfter } of read()) this.set({ listener }, notAfter.getTime() / 1000);
      },
    });
  }

  /**
   * The event dispatcher's backlog, read from the database at each scrape (one query for
   * both series). When the database does not answer within 2 s, the series are NaN
   * (unknown, not 0) and the scrape is not held up.
   */
  watchEvents(read: () => Promise<{ queued: number; oldestSeconds: number }>): void {
    let pending: Promise<{ queued: number; oldestSeconds: number } | null> | undefined;
    const current = () => {
      if (!pending) {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), 2000);
        });
        pending = Promise.race([read(), timeout])
          .catch(() => null)
          .finally(() => clearTimeout(timer));
        // One read serves the two gauges of one scrape.
        void pending.finally(() => setTimeout(() => (pending = undefined), 1000).unref());
      }
      return pending;
    };
    this.asyncGauge(
      'tagtrail_events_undispatched',
      'Events committed and not yet dispatched to webhooks and live views',
      async () => (await current())?.queued ?? Number.NaN,
    );
    this.asyncGauge(
      'tagtrail_events_undispatched_oldest_seconds',
      'Age of the oldest event not yet dispatched, 0 when none waits',
      async () => (await current())?.oldestSeconds ?? Number.NaN,
    );
  }

  private asyncGauge(name: string, help: string, read: () => Promise<number>): void {
    this.registry.removeSingleMetric(name);
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        this.set(await read());
      },
    });
  }

  /**
   * A gauge read at each scrape. Registered only once its source is known, so a series
   * that does not apply (the embedded broker's readers with an external broker) is absent
   * rather than a misleading 0.
   */
  private gauge(name: string, help: string, read: () => number): void {
    this.registry.removeSingleMetric(name);
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }
}
