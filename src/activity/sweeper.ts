import type { FastifyBaseLogger } from 'fastify';
import { PeriodicPass } from '../periodic-pass.js';
import type { ActivityService } from './service.js';

/**
 * Deletes activity entries older than TAGTRAIL_ACTIVITY_RETENTION_DAYS, at start and then
 * hourly while the service runs, as the raw log's retention does (src/ingest/retention.ts).
 */
export class ActivitySweeper extends PeriodicPass {
  constructor(
    activity: ActivityService,
    retentionDays: number,
    logger: FastifyBaseLogger,
    intervalMs = 3600_000,
  ) {
    super(
      () =>
        activity
          .sweep(retentionDays)
          .then((deleted) => {
            if (deleted > 0) logger.info({ deleted, retentionDays }, 'expired activity removed');
          })
          .catch((err: unknown) => {
            // A database outage: the next run catches up.
            logger.warn({ err }, 'removing expired activity failed; retried at the next run');
          }),
      intervalMs,
    );
  }
}
