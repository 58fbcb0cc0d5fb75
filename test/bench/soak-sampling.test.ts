import { describe, expect, it } from 'vitest';
import {
  afterWarmup,
  cpuSeconds,
  floorSlopePerHour,
  growth,
  ingestDelta,
  metricSums,
  routeMeans,
  rssMiB,
  slopePerHour,
} from '../../bench/soak-sampling.js';

// What bench:soak reports as drift and growth: a leak it prints as flat, or noise it
// prints as a leak, would mislead whoever reads the figures.
describe('the soak bench’s arithmetic', () => {
  it('gives the slope per hour of a straight line, whatever its offset', () => {
    const line = Array.from({ length: 10 }, (_, i): [number, number] => [i * 30, 100 + i * 0.5]);
    // 0.5 MiB every 30 s is 60 MiB an hour.
    expect(slopePerHour(line)).toBeCloseTo(60, 9);
    expect(slopePerHour(line.map(([x, y]) => [x, y + 1000]))).toBeCloseTo(60, 9);
  });

  it('finds no drift in a flat series with noise around it, and none from too few points', () => {
    const noisy = Array.from({ length: 40 }, (_, i): [number, number] => [
      i * 15,
      160 + (i % 2 === 0 ? 8 : -8),
    ]);
    expect(Math.abs(slopePerHour(noisy))).toBeLessThan(50);
    expect(slopePerHour([[0, 1]])).toBeNaN();
  });

  it('reads the floor: late peaks tilt the fitted line but not the floor, a rising floor shows', () => {
    // A flat saw-tooth (one low sample in every four) with tall peaks in its last third.
    const peaks = Array.from({ length: 36 }, (_, i): [number, number] => [
      i * 30,
      i % 4 === 0 ? 50 : i > 24 ? 160 : 70,
    ]);
    expect(slopePerHour(peaks)).toBeGreaterThan(100);
    expect(floorSlopePerHour(peaks)).toBeCloseTo(0, 9);
    // The same with the floor rising 1 MiB per window of two minutes: 30 MiB an hour.
    const leak = peaks.map(([x, y], i): [number, number] => [x, y + Math.floor(i / 4)]);
    expect(floorSlopePerHour(leak)).toBeCloseTo(30, 9);
    expect(floorSlopePerHour(peaks.slice(0, 8))).toBeNaN();
  });

  it('gives each route’s mean time to answer, its statuses pooled, busiest first', () => {
    const text = [
      '# TYPE h histogram',
      'h_bucket{le="0.01",method="GET",route="/api/v1/assets",status="200"} 3',
      'h_sum{method="GET",route="/api/v1/assets",status="200"} 0.3',
      'h_count{method="GET",route="/api/v1/assets",status="200"} 3',
      'h_sum{method="GET",route="/api/v1/assets",status="400"} 0.1',
      'h_count{method="GET",route="/api/v1/assets",status="400"} 1',
      'h_sum{method="POST",route="/api/v1/assets",status="201"} 0.05',
      'h_count{method="POST",route="/api/v1/assets",status="201"} 1',
      'other_sum{method="GET",route="/x",status="200"} 9',
      'other_count{method="GET",route="/x",status="200"} 9',
    ].join('\n');
    const means = routeMeans(text, 'h');
    expect(means.map(([name, count]) => [name, count])).toEqual([
      ['GET /api/v1/assets', 4],
      ['POST /api/v1/assets', 1],
    ]);
    expect(means[0]![2]).toBeCloseTo(100, 9);
    expect(means[1]![2]).toBeCloseTo(50, 9);
    // Since an earlier scrape: only what came after it.
    const earlier = [
      'h_sum{method="GET",route="/api/v1/assets",status="200"} 0.1',
      'h_count{method="GET",route="/api/v1/assets",status="200"} 2',
      'h_sum{method="POST",route="/api/v1/assets",status="201"} 0.05',
      'h_count{method="POST",route="/api/v1/assets",status="201"} 1',
    ].join('\n');
    expect(routeMeans(text, 'h', earlier)).toEqual([['GET /api/v1/assets', 2, expect.closeTo(150, 9)]]);
  });

  it('leaves out the first quarter of the samples', () => {
    expect(afterWarmup([1, 2, 3, 4, 5, 6, 7, 8])).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it('sums a series over its label sets and skips comments and buckets', () => {
    const sums = metricSums(
      [
        '# HELP tagtrail_db_pool_waiting_clients Clients waiting',
        '# TYPE tagtrail_db_pool_waiting_clients gauge',
        'tagtrail_db_pool_waiting_clients{pool="api"} 3',
        'tagtrail_db_pool_waiting_clients{pool="ingest"} 4',
        'nodejs_heap_size_used_bytes 1048576',
        'tagtrail_http_request_duration_seconds_bucket{le="0.1"} 7',
        'tagtrail_http_request_duration_seconds_count 9',
        '',
      ].join('\n'),
    );
    expect(sums.get('tagtrail_db_pool_waiting_clients')).toBe(7);
    expect(sums.get('nodejs_heap_size_used_bytes')).toBe(1048576);
    expect(sums.has('tagtrail_http_request_duration_seconds_bucket')).toBe(false);
    expect(sums.get('tagtrail_http_request_duration_seconds_count')).toBe(9);
  });

  it('ranks the tables that grew, new ones included, shrunk ones left out', () => {
    const before = new Map([
      ['stays', 100],
      ['assets', 500],
    ]);
    const after = new Map([
      ['stays', 1100],
      ['assets', 400],
      ['raw_messages', 5000],
    ]);
    expect(growth(before, after)).toEqual([
      ['raw_messages', 5000],
      ['stays', 1000],
    ]);
  });

  it('gives ingest’s transactions and mean latencies between two scrapes', () => {
    const before = metricSums(
      [
        'tagtrail_ingest_batch_messages_sum 10',
        'tagtrail_ingest_batch_messages_count 4',
        'tagtrail_ingest_batch_duration_seconds_sum 0.02',
        'tagtrail_ingest_batch_duration_seconds_count 4',
        'tagtrail_ingest_message_latency_seconds_sum{source="mqtt"} 0.05',
        'tagtrail_ingest_message_latency_seconds_count{source="mqtt"} 10',
      ].join('\n'),
    );
    const after = metricSums(
      [
        'tagtrail_ingest_batch_messages_sum 110',
        'tagtrail_ingest_batch_messages_count 54',
        'tagtrail_ingest_batch_duration_seconds_sum 0.22',
        'tagtrail_ingest_batch_duration_seconds_count 54',
        'tagtrail_ingest_message_latency_seconds_sum{source="mqtt"} 0.55',
        'tagtrail_ingest_message_latency_seconds_count{source="mqtt"} 90',
        'tagtrail_ingest_message_latency_seconds_sum{source="webhook"} 0.1',
        'tagtrail_ingest_message_latency_seconds_count{source="webhook"} 20',
      ].join('\n'),
    );
    const d = ingestDelta(before, after);
    expect(d.transactions).toBe(50);
    expect(d.booked).toBe(100);
    // (0.55 + 0.1 - 0.05) s over 100 messages; 0.2 s over 50 transactions.
    expect(d.latencyMs).toBeCloseTo(6, 9);
    expect(d.transactionMs).toBeCloseTo(4, 9);
  });

  it('reads this process’s memory and CPU from /proc', async () => {
    expect(await rssMiB(process.pid)).toBeGreaterThan(10);
    expect(await cpuSeconds(process.pid)).toBeGreaterThan(0);
  });
});
