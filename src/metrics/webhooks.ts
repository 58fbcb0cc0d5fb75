import { Counter, Histogram, type Registry } from 'prom-client';
import { SEND_OUTCOMES, type WebhookInstruments } from '../events/instruments.js';

/**
 * Seconds: a receiver nearby answers within tens of milliseconds, one across the internet
 * within a few hundred; an attempt is cut off at its bound (10 s, DeliveryPolicy.timeoutMs),
 * which the top buckets leave room above.
 */
const SEND_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The webhook series of docs/metrics.md, fed through the WebhookInstruments port. Moved at
 * most once per send (a network round trip), so prom-client's own. Every result and both
 * `ok` values are there from the start at 0: an alert on `failed` sees it rise from 0
 * rather than appear.
 */
export function webhookInstruments(registry: Registry): WebhookInstruments {
  const registers = [registry];
  const sends = new Counter({
    name: 'tagtrail_webhook_sends_total',
    help: 'Webhook send outcomes recorded, by result (delivered, retry, failed, stale)',
    labelNames: ['result'] as const,
    registers,
  });
  const durations = new Histogram({
    name: 'tagtrail_webhook_send_duration_seconds',
    help: 'Webhook send attempts, by whether the receiver answered 2xx, and how long each took',
    labelNames: ['ok'] as const,
    buckets: SEND_BUCKETS,
    registers,
  });
  for (const result of SEND_OUTCOMES) sends.inc({ result }, 0);
  durations.zero({ ok: 'true' });
  durations.zero({ ok: 'false' });
  return {
    sent: (result, n) => sends.inc({ result }, n),
    sendDuration: (seconds, ok) => durations.observe({ ok: ok ? 'true' : 'false' }, seconds),
  };
}
