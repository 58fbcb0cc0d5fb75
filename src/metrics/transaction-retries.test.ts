import { describe, expect, it } from 'vitest';
import { ServiceMetrics } from './index.js';

describe('tagtrail_db_transaction_retries_total', () => {
  it('follows the count the database layer keeps, as a counter', async () => {
    const metrics = new ServiceMetrics({ processMetrics: false });
    let retries = 0;
    metrics.watchTransactionRetries(() => retries);
    const value = async () =>
      (await metrics.registry.getSingleMetric('tagtrail_db_transaction_retries_total')!.get()).values[0]
        ?.value;
    expect(await value()).toBe(0);
    retries = 2;
    expect(await value()).toBe(2);
    expect(await value()).toBe(2);
    retries = 5;
    expect(await value()).toBe(5);
    const text = await metrics.registry.metrics();
    expect(text).toContain('# TYPE tagtrail_db_transaction_retries_total counter');
    expect(text).toContain('tagtrail_db_transaction_retries_total 5');
  });
});
