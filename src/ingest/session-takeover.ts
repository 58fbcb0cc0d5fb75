import { LogThrottle } from '../log-throttle.js';
import type { IngestLogger } from './limiter.js';

/** A connection the broker closes sooner than this after accepting it counts as taken over. */
export const TAKEOVER_SHORT_MS = 15_000;
/** Quick closes in a row before the warning: one could be a broker restart. */
export const TAKEOVER_CLOSES = 3;

/**
 * Notices the MQTT consumer's session being taken from it again and again. A broker that
 * accepts a client id already connected closes the older connection (MQTT 3.1.1 and 5),
 * and MQTT 3.1.1 gives no reason; two instances with the same client id (both without
 * TAGTRAIL_INSTANCE, or with the same one) then take the session from each other every
 * reconnect period, and ingest and /readyz flap while every line in the log says
 * "connected". Closes the consumer makes itself (its stop, its reconnect for redelivery)
 * are not the broker's doing and are not counted.
 */
export class SessionTakeoverWatch {
  private acceptedAt: number | undefined;
  private quickCloses = 0;
  private readonly throttle = new LogThrottle();

  constructor(
    private readonly clientId: string,
    private readonly logger: IngestLogger,
    private readonly now: () => number = Date.now,
  ) {}

  /** The broker accepted a connection (CONNACK). */
  accepted(): void {
    this.acceptedAt = this.now();
  }

  /** The consumer is about to close its connection itself. */
  ownClose(): void {
    this.acceptedAt = undefined;
  }

  /** The connection closed: by the broker, unless ownClose() came first. */
  closed(): void {
    const at = this.acceptedAt;
    this.acceptedAt = undefined;
    if (at === undefined) return;
    if (this.now() - at >= TAKEOVER_SHORT_MS) {
      this.quickCloses = 0;
      return;
    }
    this.quickCloses++;
    if (this.quickCloses < TAKEOVER_CLOSES) return;
    this.throttle.maybe('taken-over', (suppressed) =>
      this.logger.warn(
        { clientId: this.clientId, quick_closes: this.quickCloses, suppressed },
        `the MQTT broker keeps closing the consumer's connection within seconds of accepting it: another client probably connects with the same client id (${this.clientId}) and the two take the session from each other; give every instance its own TAGTRAIL_INSTANCE (docs/operations.md, "Running several instances")`,
      ),
    );
  }
}
