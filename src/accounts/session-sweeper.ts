import type { FastifyBaseLogger } from 'fastify';
import { SESSION_LIFETIME_SECONDS, type SessionService } from './session-service.js';

/**
 * How often ended sessions are deleted: a twelfth of the session lifetime (hourly with the
 * 12-hour lifetime), so ended rows never outnumber a few hours of sign-ins.
 */
export const SESSION_SWEEP_INTERVAL_MS = (SESSION_LIFETIME_SECONDS * 1000) / 12;

/** Runs `SessionService.sweepEnded` at start and then on an interval, while the service runs. */
export class SessionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly sessions: SessionService,
    private readonly logger: FastifyBaseLogger,
    private readonly intervalMs = SESSION_SWEEP_INTERVAL_MS,
  ) {}

  runOnce(): Promise<void> {
    this.running ??= this.sessions
      .sweepEnded()
      .then((deleted) => {
        if (deleted > 0) this.logger.info({ deleted }, 'ended web sessions deleted');
      })
      .catch((err: unknown) => {
        // A database outage: the next run catches up.
        this.logger.warn({ err }, 'deleting ended web sessions failed; retried at the next run');
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  start(): void {
    void this.runOnce();
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
