/**
 * A background pass run at start and then on an interval while the service runs, one pass
 * at a time; stop() waits for a pass in progress. A pass reports its own failures and must
 * not reject: after a database outage the next pass catches up.
 */
export class PeriodicPass {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly pass: (now: number) => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  /** One pass now, or the one already in progress. */
  runOnce(now = Date.now()): Promise<void> {
    this.running ??= this.pass(now).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Starts the first pass and the interval; resolves when that first pass is done. */
  start(): Promise<void> {
    const first = this.runOnce();
    this.timer = setInterval(() => void this.runOnce(), this.intervalMs);
    this.timer.unref();
    return first;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
