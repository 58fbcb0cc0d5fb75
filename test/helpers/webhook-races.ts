/**
 * The fixture of the webhook lock-order races (test/events/*-race.test.ts): a database with
 * one organization, the webhook service, and a third connection that holds a delivery's
 * row lock so the racers can be ordered by what the server reports waiting.
 */
import pg, { type QueryResultRow } from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ClaimedDelivery } from '../../src/events/deliveries-repository.js';
import { DEFAULT_DELIVERY_POLICY, recordOutcomes } from '../../src/events/delivery-worker.js';
import type { OutcomeCounts } from '../../src/events/instruments.js';
import type { SendResult } from '../../src/events/sender.js';
import { WebhookService } from '../../src/events/webhook-service.js';
import { claimedDelivery } from './claimed-delivery.js';
import { createTestDatabase, insertOrganization, type TestDatabase, untilSessions } from './database.js';
import { TEST_SECRETS } from './secrets.js';

/** Outcomes of a send: the receiver's 204, and no answer within the timeout. */
export const OK: SendResult = { ok: true, status: 204, error: null, durationMs: 3 };
export const TIMED_OUT: SendResult = { ok: false, status: null, error: 'timed out', durationMs: 10_000 };

export interface WebhookRaces {
  readonly database: TestDatabase;
  readonly webhooks: WebhookService;
  readonly orgId: number;
  q<T extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  claimed(id: number): Promise<ClaimedDelivery>;
  /** A worker's recording of `batch` (recordOutcomes, the default policy: retried for a day). */
  record(batch: Array<{ delivery: ClaimedDelivery; outcome: SendResult }>): Promise<OutcomeCounts>;
  /** Opens the holder's transaction and locks the delivery until release(). */
  hold(id: number): Promise<void>;
  release(): Promise<void>;
  /** Until `count` sessions wait for a row, table or advisory lock, the holder's own query aside. */
  untilWaiting(count: number, what: string): Promise<void>;
  /** Transactions PostgreSQL aborted to break a deadlock, and ran again, so far. */
  retries(): number;
}

export function webhookRaces(organization: string): WebhookRaces {
  let database: TestDatabase;
  let webhooks: WebhookService;
  let orgId: number;
  let holder: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    webhooks = new WebhookService(database.db, TEST_SECRETS, { allowPrivate: true });
    orgId = await insertOrganization(database.db, organization);
    holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
  });
  afterEach(async () => {
    await holder.query('ROLLBACK');
  });
  afterAll(async () => {
    await holder?.end();
    await database?.drop();
  });

  return {
    get database() {
      return database;
    },
    get webhooks() {
      return webhooks;
    },
    get orgId() {
      return orgId;
    },
    q: <T extends object>(sql: string, params: unknown[] = []) =>
      database.db.pool.query<T & QueryResultRow>(sql, params).then((r) => r.rows),
    claimed: (id) => claimedDelivery(database.db, id),
    record: (batch) => database.db.system((tx) => recordOutcomes(tx, batch, DEFAULT_DELIVERY_POLICY)),
    async hold(id) {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [id]);
    },
    release: async () => {
      await holder.query('COMMIT');
    },
    untilWaiting: (count, what) => untilSessions(database.db, "wait_event_type = 'Lock'", what, { count }),
    retries: () => database.db.stats.transientConflictRetries,
  };
}
