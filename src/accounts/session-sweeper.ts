import type { FastifyBaseLogger } from 'fastify';
import { PeriodicPass } from '../periodic-pass.js';
import { SESSION_LIFETIME_SECONDS, type SessionService } from './session-service.js';

/**
 * How often ended sessions are deleted: a twelfth of the session lifetime (hourly with the
 * 12-hour lifetime), so ended rows never outnumber a few hours of sign-ins.
 */
export const SESSION_SWEEP_INTERVAL_MS = (SESSION_LIFETIME_SECONDS * 1000) / 12;

/** Runs `SessionService.sweepEnded` at start and then on an interval, while the service runs. */
export class SessionSweeper extends PeriodicPass {
  constructor(sessions: SessionService, logger: FastifyBaseLogger, intervalMs = SESSION_SWEEP_INTERVAL_MS) {
    super(
      () =>
        sessions
          .sweepEnded()
          .then((deleted) => {
            if (deleted > 0) logger.info({ deleted }, 'ended web sessions deleted');
          })
          .catch((err: unknown) => {
            // A database outage: the next run catches up.
            logger.warn({ err }, 'deleting ended web sessions failed; retried at the next run');
          }),
      intervalMs,
    );
  }
}
