import type { Database, Tx } from '../db/pool.js';
import { webhookSecretContext } from '../secrets/contexts.js';
import type { SecretBox } from '../secrets/secret-box.js';
import {
  type ClaimedDelivery,
  claimDeliveries,
  endpointsNow,
  lockDeliveries,
  lockEndpoints,
  lockSubjectHeads,
  markDelivered,
  markFailed,
  releaseAllLeases,
  releaseDeliveries,
} from './deliveries-repository.js';
import {
  NO_WEBHOOK_INSTRUMENTS,
  type OutcomeCounts,
  SEND_OUTCOMES,
  type WebhookInstruments,
} from './instruments.js';
import { eventBody, wireEventId } from './outbox.js';
import { type SendResult, sendWebhook } from './sender.js';
import { signedHeaders } from './signing.js';

export interface DeliveryPolicy {
  /** One attempt's bound: connect, send, answer. */
  timeoutMs: number;
  /** Sends in flight per endpoint in this process: a slow receiver holds no more. */
  perEndpoint: number;
  /** Deliveries held (claimed, not yet recorded) in this process. */
  maxInFlight: number;
  /** Deliveries claimed ahead per endpoint send slot (a local queue, so claims come in batches). */
  prefetch: number;
  /** First retry after this; each later one waits twice as long, up to retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** A delivery is retried until it is this old, then given up. */
  retryWindowMs: number;
  /** An endpoint failing without a success for this long is disabled. */
  disableAfterMs: number;
  /** TAGTRAIL_WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** Looking for due retries when nothing else wakes the worker. */
  pollMs: number;
}

export const DEFAULT_DELIVERY_POLICY: DeliveryPolicy = {
  timeoutMs: 10_000,
  perEndpoint: 8,
  maxInFlight: 512,
  prefetch: 8,
  retryBaseMs: 5_000,
  retryMaxMs: 3600_000,
  retryWindowMs: 24 * 3600_000,
  disableAfterMs: 24 * 3600_000,
  allowPrivate: false,
  pollMs: 1_000,
};

/** When to try again after `attempts` failures, with ±20% jitter so retries do not come in waves. */
export function retryDelay(
  attempts: number,
  policy: Pick<DeliveryPolicy, 'retryBaseMs' | 'retryMaxMs'>,
): number {
  const plain = Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(plain * (0.8 + Math.random() * 0.4));
}

/**
 * Sends pending deliveries (at least once: a delivery is marked done only after the
 * receiver's 2xx; a crash before that leaves it pending, retried when its lease ends).
 * Runs beside ingest and never inside its transactions; wake() is called when new
 * deliveries may exist, and a timer catches due retries.
 */
export class DeliveryWorker {
  /** Claimed and not yet recorded, per endpoint (what the claim query must not exceed). */
  private readonly held = new Map<number, number>();
  /** Claimed and waiting for a send slot, per endpoint. */
  private readonly queues = new Map<number, ClaimedDelivery[]>();
  /** Sends in flight per endpoint. */
  private readonly active = new Map<number, number>();
  /** Outcomes waiting to be recorded, in one transaction for all of them. */
  private results: Array<{ delivery: ClaimedDelivery; outcome: SendResult }> = [];
  private flushing: Promise<void> | undefined;
  private inFlight = 0;
  private running = false;
  private pumping = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private idle: Array<() => void> = [];

  constructor(
    private readonly db: Database,
    private readonly secrets: SecretBox,
    private readonly policy: DeliveryPolicy = DEFAULT_DELIVERY_POLICY,
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly instruments: WebhookInstruments = NO_WEBHOOK_INSTRUMENTS,
  ) {}

  start(): void {
    this.running = true;
    this.schedule();
    this.wake();
  }

  /**
   * Sends now, not when their leases run out (up to 91 s: timeout × (prefetch + 1) + 1 s),
   * the deliveries a worker that is gone had claimed: the service's run before this one,
   * stopped by a crash or `kill -9`, or the service a restored backup was taken of. Only for
   * the composition root to call, before start(), when it knows no other worker shares the
   * database (the service on its own embedded one): a live instance's leases released,
   * its deliveries would be sent twice at once. The number released.
   */
  async releaseOrphanedLeases(): Promise<number> {
    return this.db.system((tx) => releaseAllLeases(tx));
  }

  /** Stops claiming; what is claimed is sent and recorded first. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    if (this.inFlight > 0 || this.pumping) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  wake(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => {
      this.pumping = false;
      // A wake that came in while stopping must not skip settle(): stop() waits on it.
      if (this.again && this.running) {
        this.again = false;
        this.wake();
      } else {
        this.again = false;
        this.settle();
      }
    });
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.wake();
      this.schedule();
    }, this.policy.pollMs);
    this.timer.unref();
  }

  private settle(): void {
    if (this.inFlight > 0 || this.pumping) return;
    const waiting = this.idle;
    this.idle = [];
    for (const resolve of waiting) resolve();
  }

  private async pump(): Promise<void> {
    // The deliveries claimed ahead are brought up to date in the first claim's transaction.
    let refresh = this.queues.size > 0;
    while (this.running) {
      if (!refresh && this.policy.maxInFlight - this.inFlight <= 0) return;
      let claimed: ClaimedDelivery[];
      try {
        claimed = await this.db.system(async (tx) => {
          if (refresh) await this.refreshQueued(tx);
          const free = this.policy.maxInFlight - this.inFlight;
          if (free <= 0) return [];
          return claimDeliveries(tx, {
            limit: free,
            perEndpoint: this.policy.perEndpoint * this.policy.prefetch,
            // Long enough for a full local queue to be sent at the endpoint's slowest;
            // a crashed worker's deliveries are retried by others once it runs out.
            leaseMs: this.policy.timeoutMs * (this.policy.prefetch + 1) + 1_000,
            busy: this.held,
          });
        });
      } catch (err) {
        this.onError(err);
        return;
      } finally {
        refresh = false;
      }
      if (claimed.length === 0) return;
      for (const d of claimed) {
        this.inFlight++;
        this.held.set(d.endpointId, (this.held.get(d.endpointId) ?? 0) + 1);
        const queue = this.queues.get(d.endpointId) ?? [];
        this.queues.set(d.endpointId, queue);
        queue.push(d);
      }
      for (const endpointId of new Set(claimed.map((d) => d.endpointId))) this.drain(endpointId);
    }
  }

  /**
   * Brings the deliveries claimed ahead and still waiting for a slot up to date with their
   * endpoints, at every claim (each poll or wake): those of an endpoint removed or disabled
   * since are dropped (a disabled one's released for when it is enabled), and the others go
   * to the endpoint's current URL under its current secret. Sends already in flight finish.
   */
  private async refreshQueued(tx: Tx): Promise<void> {
    const byId = new Map((await endpointsNow(tx, [...this.queues.keys()])).map((e) => [e.id, e]));
    const dropped: ClaimedDelivery[] = [];
    for (const [endpointId, queue] of this.queues) {
      const endpoint = byId.get(endpointId);
      if (!endpoint || endpoint.closed) {
        dropped.push(...queue);
        this.queues.delete(endpointId);
        continue;
      }
      for (const d of queue) {
        d.url = endpoint.url;
        d.secret = endpoint.secret;
      }
    }
    // Held no more whether or not the release commits: uncommitted, their leases run out.
    for (const d of dropped) this.release(d);
    await releaseDeliveries(
      tx,
      dropped.map((d) => d.id),
    );
  }

  /** The delivery is no longer held here: its slot is free for the next claim. */
  private release(d: ClaimedDelivery): void {
    this.inFlight--;
    const n = (this.held.get(d.endpointId) ?? 1) - 1;
    if (n === 0) this.held.delete(d.endpointId);
    else this.held.set(d.endpointId, n);
  }

  /** Starts sends for the endpoint up to its slots. */
  private drain(endpointId: number): void {
    const queue = this.queues.get(endpointId);
    while (queue && queue.length > 0 && (this.active.get(endpointId) ?? 0) < this.policy.perEndpoint) {
      const d = queue.shift()!;
      this.active.set(endpointId, (this.active.get(endpointId) ?? 0) + 1);
      void this.attempt(d).then((outcome) => {
        this.active.set(endpointId, (this.active.get(endpointId) ?? 1) - 1);
        this.results.push({ delivery: d, outcome });
        this.flush();
        this.drain(endpointId);
      });
    }
    if (queue && queue.length === 0) this.queues.delete(endpointId);
  }

  private attempt(d: ClaimedDelivery): Promise<SendResult> {
    const body = eventBody(d.event);
    let secret: string;
    try {
      secret = this.secrets.open(d.secret, webhookSecretContext(d.event.org_id));
    } catch (err) {
      // Sealed under a key this instance lacks (another started since with a newer ring):
      // a failed attempt, retried later, never a delivery signed with the wrong secret.
      this.onError(err);
      return Promise.resolve({ ok: false, status: null, error: 'signing secret unavailable', durationMs: 0 });
    }
    return sendWebhook(d.url, body, signedHeaders(secret, wireEventId(d.eventId), body), {
      timeoutMs: this.policy.timeoutMs,
      allowPrivate: this.policy.allowPrivate,
    }).then((outcome) => {
      // Only attempts that reached the sender: one without its secret above had no exchange.
      this.instruments.sendDuration(outcome.durationMs / 1000, outcome.ok);
      return outcome;
    });
  }

  /**
   * Records the outcomes gathered so far in one transaction (one at a time; those that
   * arrive meanwhile go in the next). Only then are the deliveries released: the next
   * event of each subject is claimable once its predecessor is recorded.
   */
  private flush(): void {
    if (this.flushing || this.results.length === 0) return;
    const batch = this.results;
    this.results = [];
    this.flushing = this.record(batch)
      .catch((err) => {
        // Not recorded: the leases run out and the deliveries are sent again (at least once).
        this.onError(err);
      })
      .finally(() => {
        this.flushing = undefined;
        for (const { delivery } of batch) this.release(delivery);
        this.flush();
        if (this.running) this.wake();
        else this.settle();
      });
  }

  private async record(batch: Array<{ delivery: ClaimedDelivery; outcome: SendResult }>): Promise<void> {
    // The counts of the run that committed: one aborted by a deadlock and run again, or
    // rolled back, counts nothing (its outcomes are sent again once their leases run out).
    const counts = await this.db.system((tx) => recordOutcomes(tx, batch, this.policy));
    for (const result of SEND_OUTCOMES) if (counts[result] > 0) this.instruments.sent(result, counts[result]);
  }
}

/**
 * Records a batch of outcomes in `tx`: the successes, then each failure, retried after
 * retryDelay or given up once past the retry window. The subject-heads lock (when an
 * outcome ends a head), then every delivery of the batch and then their endpoints, each
 * in id order, are locked before the first update (lockDeliveries: the lock order Send
 * again keeps too; lockEndpoints). An outcome whose delivery no longer holds the lease it
 * was claimed with is not recorded (`stale`; lockDeliveries says why): the send happened,
 * and the receiver dedupes on the event's id whatever was recorded since. Returns the
 * outcomes by result, for the caller to count once `tx` commits.
 */
export async function recordOutcomes(
  tx: Tx,
  outcomes: Array<{ delivery: ClaimedDelivery; outcome: SendResult }>,
  policy: Pick<DeliveryPolicy, 'retryBaseMs' | 'retryMaxMs' | 'retryWindowMs' | 'disableAfterMs'>,
): Promise<OutcomeCounts> {
  const planned = outcomes.map(({ delivery: d, outcome }) => ({
    d,
    outcome,
    retryAt: outcome.ok ? null : retryAtOf(d, policy),
  }));
  if (planned.some((x) => x.outcome.ok || !x.retryAt)) await lockSubjectHeads(tx, 'shared');
  const held = await lockDeliveries(
    tx,
    planned.map((x) => x.d),
  );
  const batch = planned.filter((x) => held.has(x.d.id));
  await lockEndpoints(
    tx,
    batch.map((x) => x.d.endpointId),
  );
  await markDelivered(
    tx,
    batch.filter((x) => x.outcome.ok).map((x) => ({ delivery: x.d, outcome: x.outcome })),
  );
  const failed = batch.filter((x) => !x.outcome.ok).sort((a, b) => a.d.id - b.d.id);
  for (const { d, outcome, retryAt } of failed)
    await markFailed(tx, d, outcome, retryAt, policy.disableAfterMs);
  const givenUp = failed.filter((x) => !x.retryAt).length;
  return {
    delivered: batch.length - failed.length,
    retry: failed.length - givenUp,
    failed: givenUp,
    stale: outcomes.length - batch.length,
  };
}

/** When a failed delivery is tried again; null once that is past its retry window (given up). */
function retryAtOf(
  d: ClaimedDelivery,
  policy: Pick<DeliveryPolicy, 'retryBaseMs' | 'retryMaxMs' | 'retryWindowMs'>,
): Date | null {
  const retryAt = Date.now() + retryDelay(d.attempts + 1, policy);
  return retryAt > d.createdAt.getTime() + policy.retryWindowMs ? null : new Date(retryAt);
}
