/**
 * What the delivery worker reports about its webhook sends, for the metrics endpoint
 * (docs/metrics.md, "Webhooks"). The worker calls these at the points only it knows (an
 * attempt answered, a batch of outcomes committed); the composition root hands in the
 * implementation (src/metrics/webhooks.ts), so events know nothing of Prometheus. Calls
 * must be cheap and never throw: they run on the worker's path, after the send or commit.
 */
export interface WebhookInstruments {
  /** `n` outcomes of one result, counted once the transaction recording them committed. */
  sent(result: SendOutcome, n: number): void;
  /** One attempt's HTTP exchange (resolution, connection, answer), and whether it got a 2xx. */
  sendDuration(seconds: number, ok: boolean): void;
}

/**
 * `delivered`: a 2xx, recorded. `retry`: a failed attempt, tried again later. `failed`: a
 * failed attempt past the retry window, given up. `stale`: an outcome that arrived after
 * its delivery's lease ran out, so nothing was recorded (recordOutcomes says why).
 */
export type SendOutcome = 'delivered' | 'retry' | 'failed' | 'stale';

export const SEND_OUTCOMES: readonly SendOutcome[] = ['delivered', 'retry', 'failed', 'stale'];

/** A recording's outcomes by result. */
export type OutcomeCounts = Record<SendOutcome, number>;

/** For a worker run without a metrics endpoint (the CLI, most tests). */
export const NO_WEBHOOK_INSTRUMENTS: WebhookInstruments = {
  sent: () => undefined,
  sendDuration: () => undefined,
};
