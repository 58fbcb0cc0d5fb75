import { describe, expect, it } from 'vitest';
import { groupFigures, ingestTotals } from '../../bench/ingest-groups.js';
import { ServiceMetrics } from '../../src/metrics/index.js';

// bench:ingest prints how the service grouped a run's messages from the service's own
// /metrics; read here from the exposition the real instruments render.
describe('bench:ingest group figures', () => {
  const message = (source: 'mqtt' | 'webhook', family: string, waitMs: number) => ({
    family,
    source,
    good: 1,
    bad: 0,
    unknown: 0,
    receivedAt: 1_000,
    committedAt: 1_000 + waitMs,
  });

  it('sums each series over its label sets, and tells two readings apart', async () => {
    const metrics = new ServiceMetrics({ processMetrics: false });
    const before = ingestTotals(await metrics.registry.metrics());
    expect(before).toEqual({
      transactions: 0,
      transactionSeconds: 0,
      bookedMessages: 0,
      placedReads: 0,
      storedMessages: 0,
      messageSeconds: 0,
    });

    metrics.ingest.batchCommitted({ messages: 3, reads: 300, seconds: 0.02 });
    metrics.ingest.batchCommitted({ messages: 0, reads: 100, seconds: 0.04 });
    metrics.ingest.messageStored(message('mqtt', 'generic-json', 10));
    metrics.ingest.messageStored(message('webhook', 'impinj-r700', 30));
    const after = ingestTotals(await metrics.registry.metrics());

    expect(after.transactions).toBe(2);
    expect(after.bookedMessages).toBe(3);
    expect(after.placedReads).toBe(400);
    expect(after.storedMessages).toBe(2);
    expect(after.transactionSeconds).toBeCloseTo(0.06, 9);
    expect(after.messageSeconds).toBeCloseTo(0.04, 9);
    expect(groupFigures(before, after)).toEqual({
      transactions: 2,
      readsPerTransaction: 200,
      messagesPerTransaction: 1.5,
      transactionMs: 30,
      messageWaitMs: 20,
    });
  });

  it('answers zeros for a window without transactions', () => {
    const none = ingestTotals('# HELP x\n# TYPE x counter\n');
    expect(groupFigures(none, none)).toEqual({
      transactions: 0,
      readsPerTransaction: 0,
      messagesPerTransaction: 0,
      transactionMs: 0,
      messageWaitMs: 0,
    });
  });

  it('ignores comments, blank lines and values that are not numbers', () => {
    const text = [
      '# TYPE tagtrail_ingest_batch_reads histogram',
      'tagtrail_ingest_batch_reads_sum 42',
      '',
      'tagtrail_ingest_batch_reads_count{x="a b"} 2',
      'tagtrail_ingest_batch_reads_count{x="c"} 3',
      'tagtrail_ingest_batch_messages_sum NaN',
    ].join('\n');
    const totals = ingestTotals(text);
    expect(totals.placedReads).toBe(42);
    expect(totals.transactions).toBe(5);
    expect(totals.bookedMessages).toBe(0);
  });
});
