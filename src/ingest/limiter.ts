import { settleAll } from './settle-all.js';

/** Structured logging as the ingest transports use it; Fastify's pino logger fits. */
export interface IngestLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: IngestLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** Who waits in Limiter.wait(): its weight, and what to call once its slot is taken. */
export interface SlotWaiter {
  readonly weight: number;
  granted(): void;
}

/**
 * Bounds the messages a transport has taken in and not yet settled: how many, and how many
 * payload bytes (`maxWeight`), so a backlog waits in the broker (which slows the readers)
 * instead of in our memory. A transport waits in acquire() before it reads on, and lets a
 * stop wait until nothing is in flight. Waiters are served in order, so a large message is
 * not overtaken forever by small ones.
 */
export class Limiter {
  private active = 0;
  private weight = 0;
  /**
   * Waiters in order, from `head` on. Not shifted one by one: the embedded broker hands
   * over every PUBLISH of a socket read at once, thousands of one-read messages, and
   * shifting a long array copies what is behind the first.
   */
  private readonly waiting: SlotWaiter[] = [];
  private head = 0;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    readonly max: number,
    readonly maxWeight = Number.POSITIVE_INFINITY,
  ) {
    if (!Number.isInteger(max) || max < 1)
      throw new Error(`concurrency must be a positive integer, got ${max}`);
    if (!(maxWeight > 0)) throw new Error(`maxWeight must be positive, got ${maxWeight}`);
  }

  get inFlight(): number {
    return this.active;
  }

  /** The weight (payload bytes) in flight. */
  get inFlightWeight(): number {
    return this.weight;
  }

  /** Resolves once a slot and `weight` are taken; release() them when the work is done. */
  acquire(weight = 0): Promise<void> {
    if (this.tryAcquire(weight)) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push({ weight, granted: resolve }));
  }

  /**
   * acquire() without a promise: `waiter.granted()` is called once its slot and weight are
   * taken (at once when they are free). A caller following thousands of waiting messages
   * keeps one object for each instead of a promise and its reaction.
   */
  wait(waiter: SlotWaiter): void {
    if (this.tryAcquire(waiter.weight)) waiter.granted();
    else this.waiting.push(waiter);
  }

  /** Takes a slot and `weight` if they are free and nobody waits for them; true if taken. */
  tryAcquire(weight = 0): boolean {
    if (this.head !== this.waiting.length || !this.fits(weight)) return false;
    this.take(weight);
    return true;
  }

  release(weight = 0): void {
    this.active--;
    this.weight -= weight;
    // The waiters served are told once the bookkeeping is done: one may release again at once.
    let served: SlotWaiter | SlotWaiter[] | undefined;
    while (this.head < this.waiting.length && this.fits(this.waiting[this.head]!.weight)) {
      const next = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined as never;
      this.take(next.weight);
      if (served === undefined) served = next;
      else if (Array.isArray(served)) served.push(next);
      else served = [served, next];
    }
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    if (this.active === 0) for (const done of this.idleWaiters.splice(0)) done();
    if (served === undefined) return;
    if (!Array.isArray(served)) {
      served.granted();
      return;
    }
    // Each is told, whatever another one throws.
    settleAll(served, (waiter) => waiter.granted());
  }

  /** Runs `fn` in a slot. */
  async run<T>(fn: () => Promise<T>, weight = 0): Promise<T> {
    await this.acquire(weight);
    try {
      return await fn();
    } finally {
      this.release(weight);
    }
  }

  /** Resolves when nothing is in flight and nobody waits for a slot. */
  idle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** A message heavier than the whole budget still goes, alone. */
  private fits(weight: number): boolean {
    return this.active < this.max && (this.active === 0 || this.weight + weight <= this.maxWeight);
  }

  private take(weight: number): void {
    this.active++;
    this.weight += weight;
  }
}

/**
 * How much a transport takes in before it stops reading: enough messages for group commit
 * to fill its batches (GroupCommit: 5,000 messages or 10,000 reads each, four at once),
 * also of one-read messages, and a byte bound so that a backlog of large payloads cannot
 * take the memory. A one-read message in flight is about a kilobyte of heap.
 */
export const IN_FLIGHT = { messages: 20_000, bytes: 32 * 1024 * 1024 };

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
