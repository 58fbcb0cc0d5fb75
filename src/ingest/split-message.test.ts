import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import type { PlacedReads, ReaderWork } from './reader-batch.js';
import { PartsTally } from './split-message.js';

const part = (reads: number[]): ReaderWork =>
  ({ message: {} as ReaderWork['message'], keys: [], lane: 0, reads, book: false }) as ReaderWork;

const placed = (good: number, errors: PlacedReads['errors'] = []): PlacedReads => ({
  good,
  bad: errors.length,
  unknown: 0,
  errors,
});

const pgError = (code: string) => Object.assign(new Error(`error ${code}`), { code });

describe('PartsTally', () => {
  it('answers once every part has settled, summed in part order whatever order they settle in', () => {
    fc.assert(
      fc.property(
        fc
          .array(fc.nat({ max: 5 }), { minLength: 1, maxLength: 6 })
          .chain((goods) =>
            fc.tuple(fc.constant(goods), fc.shuffledSubarray([...goods.keys()], { minLength: goods.length })),
          ),
        ([goods, order]) => {
          const done = vi.fn();
          const fail = vi.fn();
          const tally = new PartsTally(
            goods.map(() => part([0])),
            done,
            fail,
          );
          for (const [k, i] of order.entries()) {
            expect(done).not.toHaveBeenCalled();
            tally.settleOf(i).resolve({ placed: placed(goods[i]!, [{ read: i, text: `part ${i}` }]) });
            if (k < order.length - 1) expect(done).not.toHaveBeenCalled();
          }
          expect(done).toHaveBeenCalledTimes(1);
          expect(fail).not.toHaveBeenCalled();
          const sum = done.mock.calls[0]![0] as PlacedReads;
          expect(sum.good).toBe(goods.reduce((a, b) => a + b, 0));
          expect(sum.errors.map((e) => e.text)).toEqual(goods.map((_, i) => `part ${i}`));
        },
      ),
    );
  });

  it('counts a part that fails every time as its reads not placed, and goes on', () => {
    const done = vi.fn();
    const fail = vi.fn();
    const tally = new PartsTally([part([0, 2]), part([1])], done, fail);
    tally.settleOf(0).reject(pgError('22P02'));
    tally.settleOf(1).resolve({ placed: placed(1) });
    expect(fail).not.toHaveBeenCalled();
    expect(done).toHaveBeenCalledTimes(1);
    const sum = done.mock.calls[0]![0] as PlacedReads;
    expect(sum).toMatchObject({ good: 1, bad: 2, unknown: 0 });
    expect(sum.errors[0]!.text).toMatch(/^2 read\(s\) not placed: 22P02/);
  });

  it('refuses the message once on a failure another attempt may pass, and answers nothing after', () => {
    const done = vi.fn();
    const fail = vi.fn();
    const tally = new PartsTally([part([0]), part([1]), part([2])], done, fail);
    const deadlock = pgError('40P01');
    tally.settleOf(1).reject(deadlock);
    tally.settleOf(0).resolve({ placed: placed(1) });
    tally.settleOf(2).reject(pgError('57014'));
    expect(fail).toHaveBeenCalledTimes(1);
    expect(fail).toHaveBeenCalledWith(deadlock);
    expect(done).not.toHaveBeenCalled();
  });

  it('counts a part once if it is settled twice', () => {
    const done = vi.fn();
    const tally = new PartsTally([part([0]), part([1])], done, vi.fn());
    tally.settleOf(0).resolve({ placed: placed(1) });
    tally.settleOf(0).resolve({ placed: placed(1) });
    expect(done).not.toHaveBeenCalled();
    tally.settleOf(1).resolve({ placed: placed(1) });
    expect(done).toHaveBeenCalledTimes(1);
    expect((done.mock.calls[0]![0] as PlacedReads).good).toBe(2);
  });
});
