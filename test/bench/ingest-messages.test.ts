import { describe, expect, it } from 'vitest';
import { epc } from '../../bench/harness.js';
import { benchMessages, type MessagePlan } from '../../bench/ingest-messages.js';

// bench:ingest's messages, and the warm-up's (--warmup): the warm-up must read other assets
// than the measured run, so that the measured run writes what it would have written cold.
describe('bench:ingest messages', () => {
  const assets = 6;
  const plan = (population: MessagePlan['population'], extra: Partial<MessagePlan> = {}): MessagePlan => ({
    population,
    reads: 2 * assets,
    assets,
    batch: 2,
    antennas: 2,
    base: Date.parse('2026-12-06T00:00:00Z'),
    // Asset n is database id 100 + n, the warm-up's numbers included.
    assetIds: new Map(Array.from({ length: 2 * assets }, (_, n) => [n, 100 + n])),
    locationIds: [11, 12, 13, 14],
    readerIds: [7, 8],
    ...extra,
  });
  const tagsOf = (messages: Array<{ payload: string }>) =>
    new Set(
      messages.flatMap((m) =>
        (JSON.parse(m.payload) as { reads: Array<{ tag: string }> }).reads.map((r) => r.tag),
      ),
    );

  it('reads every asset once a round, in messages of the batch, by the reader of its location', () => {
    const { messages, ceiling } = benchMessages(plan('stationary'));
    const reads = messages.flatMap((m) => (JSON.parse(m.payload) as { reads: unknown[] }).reads);
    expect(reads).toHaveLength(2 * assets);
    expect(tagsOf(messages)).toEqual(new Set(Array.from({ length: assets }, (_, a) => epc(a))));
    expect(messages.every((m) => (JSON.parse(m.payload) as { reads: unknown[] }).reads.length <= 2)).toBe(
      true,
    );
    // Stationary: asset a always at location a % 4, read by reader floor(location / 2).
    for (const c of ceiling) {
      for (const r of c.reads) {
        const a = r.assetId - 100;
        expect(r.locationId).toBe(11 + (a % 4));
        expect(c.readerId).toBe(a % 4 < 2 ? 7 : 8);
      }
    }
  });

  it("reads the warm-up's assets, from firstAsset on, and none of the measured run's", () => {
    for (const population of ['stationary', 'moving'] as const) {
      const measured = benchMessages(plan(population));
      const warm = benchMessages(plan(population, { firstAsset: assets }));
      const warmTags = tagsOf(warm.messages);
      expect(warmTags).toEqual(new Set(Array.from({ length: assets }, (_, a) => epc(assets + a))));
      for (const tag of tagsOf(measured.messages)) expect(warmTags.has(tag)).toBe(false);
      const warmIds = warm.ceiling.flatMap((c) => c.reads.map((r) => r.assetId));
      expect(new Set(warmIds)).toEqual(new Set(Array.from({ length: assets }, (_, a) => 100 + assets + a)));
      // The same shape as the measured run's: as many messages, reads and locations.
      expect(warm.messages.map((m) => m.reader)).toEqual(measured.messages.map((m) => m.reader));
      expect(warm.ceiling.map((c) => c.reads.map((r) => r.locationId))).toEqual(
        measured.ceiling.map((c) => c.reads.map((r) => r.locationId)),
      );
    }
  });
});
