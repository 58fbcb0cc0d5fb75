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

/**
 * Bounds how many messages are stored at once (each holds a database connection for its
 * transaction) and lets a transport wait until none is in flight.
 */
export class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly idleWaiters: Array<() => void> = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1)
      throw new Error(`concurrency must be a positive integer, got ${max}`);
  }

  get inFlight(): number {
    return this.active;
  }

  /** Resolves once a slot is taken; release() it when the work is done. */
  acquire(): Promise<void> {
    if (this.active < this.max) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) {
      next(); // the slot passes straight to the next waiter
      return;
    }
    this.active--;
    if (this.active === 0) for (const done of this.idleWaiters.splice(0)) done();
  }

  /** Runs `fn` in a slot. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  /** Resolves when nothing is in flight and nobody waits for a slot. */
  idle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

/** Logs at most once per `intervalMs` per key, counting what it left out. */
export class LogThrottle {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(private readonly intervalMs = 60_000) {}

  /** Calls `log(suppressed)` unless this key logged within the interval. */
  maybe(key: string, log: (suppressed: number) => void, now = Date.now()): void {
    const entry = this.last.get(key);
    if (entry && now - entry.at < this.intervalMs) {
      entry.suppressed++;
      return;
    }
    this.last.set(key, { at: now, suppressed: 0 });
    if (this.last.size > 10_000) this.last.clear();
    log(entry?.suppressed ?? 0);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
