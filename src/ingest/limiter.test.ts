import { describe, expect, it } from 'vitest';
import { Limiter, type SlotWaiter } from './limiter.js';

const waiter = (weight: number, granted: () => void): SlotWaiter => ({ weight, granted });

describe('Limiter.wait', () => {
  it('grants at once when a slot is free, and otherwise in arrival order with acquire()', async () => {
    const limiter = new Limiter(1);
    const order: string[] = [];
    limiter.wait(waiter(0, () => order.push('a')));
    expect(order).toEqual(['a']);
    const b = limiter.acquire().then(() => order.push('b'));
    limiter.wait(waiter(0, () => order.push('c')));
    limiter.release();
    await b;
    expect(order).toEqual(['a', 'b']);
    limiter.release();
    expect(order).toEqual(['a', 'b', 'c']);
    expect(limiter.inFlight).toBe(1);
  });

  it('holds a waiter back while its weight would pass the budget', () => {
    const limiter = new Limiter(10, 100);
    const order: number[] = [];
    limiter.wait(waiter(80, () => order.push(80)));
    limiter.wait(waiter(30, () => order.push(30)));
    expect(order).toEqual([80]);
    limiter.release(80);
    expect(order).toEqual([80, 30]);
    expect(limiter.inFlightWeight).toBe(30);
  });

  it('lets a granted waiter release at once, and the next one is served', () => {
    const limiter = new Limiter(1);
    const order: string[] = [];
    limiter.wait(waiter(0, () => order.push('first')));
    // Given up as soon as granted (a stop while it waited): it releases inside release().
    limiter.wait(
      waiter(0, () => {
        order.push('gives up');
        limiter.release();
      }),
    );
    limiter.wait(waiter(0, () => order.push('third')));
    limiter.release();
    expect(order).toEqual(['first', 'gives up', 'third']);
    expect(limiter.inFlight).toBe(1);
  });

  it('tells every waiter served by one release, even when one throws, and throws after', () => {
    const limiter = new Limiter(10, 100);
    expect(limiter.tryAcquire(100)).toBe(true);
    const order: string[] = [];
    limiter.wait(
      waiter(50, () => {
        order.push('a');
        throw new Error('a failed');
      }),
    );
    limiter.wait(waiter(50, () => order.push('b')));
    expect(order).toEqual([]);
    // Releasing the 100 frees room for both at once.
    expect(() => limiter.release(100)).toThrow('a failed');
    expect(order).toEqual(['a', 'b']);
    expect(limiter.inFlight).toBe(2);
  });
});
