import type { Database } from '../db/pool.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { DEFAULT_DELIVERY_POLICY, type DeliveryPolicy, DeliveryWorker } from './delivery-worker.js';
import { dispatchEvents } from './dispatcher.js';
import type { WebhookInstruments } from './instruments.js';
import { sweepNotSeen } from './not-seen.js';

export interface EventsOptions {
  delivery?: Partial<DeliveryPolicy>;
  /** asset.not_seen after this long without a sighting (TAGTRAIL_NOT_SEEN_AFTER_SECONDS). */
  notSeenAfterMs?: number;
  /** How often the dispatcher looks for new events when the last look found none. */
  dispatchPollMs?: number;
  onError?: (err: unknown) => void;
  /** Where the delivery worker counts its sends (the metrics endpoint's; none unless given). */
  instruments?: WebhookInstruments;
}

/**
 * The background side of events: the dispatcher (events to deliveries and live notices),
 * the delivery worker and the asset.not_seen sweeper. None of it runs inside an ingest
 * transaction; ingest only writes its events.
 */
export class EventsRuntime {
  readonly worker: DeliveryWorker;
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeLoop: (() => void) | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private onError: (err: unknown) => void;

  constructor(
    private readonly db: Database,
    secrets: SecretBox,
    private readonly options: EventsOptions = {},
  ) {
    this.onError = options.onError ?? (() => undefined);
    this.worker = new DeliveryWorker(
      db,
      secrets,
      { ...DEFAULT_DELIVERY_POLICY, ...options.delivery },
      (err) => this.onError(err),
      options.instruments,
    );
  }

  /** `onError`: where the background work reports failures (the service log). */
  start(onError?: (err: unknown) => void): void {
    if (this.running) return;
    if (onError) this.onError = onError;
    this.running = true;
    this.worker.start();
    this.loop = this.dispatchLoop();
    const notSeen = this.options.notSeenAfterMs ?? 24 * 3600_000;
    const every = Math.max(1_000, Math.min(60_000, notSeen / 10));
    this.sweeper = setInterval(() => {
      sweepNotSeen(this.db, notSeen).catch(this.onError);
    }, every);
    this.sweeper.unref();
  }

  /** New events or re-enabled endpoints: look now rather than at the next poll. */
  wake(): void {
    this.wakeLoop?.();
    this.worker.wake();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.sweeper);
    this.wakeLoop?.();
    await this.loop;
    await this.worker.stop();
  }

  private async dispatchLoop(): Promise<void> {
    const pollMs = this.options.dispatchPollMs ?? 200;
    while (this.running) {
      let dispatched = 0;
      try {
        dispatched = await dispatchEvents(this.db);
      } catch (err) {
        this.onError(err);
      }
      if (dispatched > 0) {
        this.worker.wake();
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        this.wakeLoop = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeLoop = undefined;
    }
  }
}
