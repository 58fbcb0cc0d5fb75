import type { Database } from '../../src/db/pool.js';
import { WebhookService } from '../../src/events/webhook-service.js';
import { TEST_SECRETS } from './secrets.js';

/**
 * Gives the organization an endpoint that wants moves: without one they are not stored as
 * events (test/events/move-subscriptions.test.ts). The default address is a closed port,
 * for tests that read the events table rather than receive deliveries. Answers the
 * endpoint's signing secret.
 */
export async function subscribeToMoves(
  db: Database,
  orgId: number,
  url = 'http://127.0.0.1:9/hook',
): Promise<{ secret: string }> {
  const { secret } = await new WebhookService(db, TEST_SECRETS, { allowPrivate: true }).create(orgId, {
    url,
    event_types: ['asset.first_seen', 'asset.moved'],
  });
  return { secret };
}
