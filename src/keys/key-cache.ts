import pg from 'pg';
import type { AuthKeyRecord } from './repository.js';

/** The channel migration 0020 announces key changes on: a key's id, or '*' for all. */
export const KEY_CHANNEL = 'tagtrail_api_keys';

const noop = () => undefined;

export interface KeyCacheOptions {
  /** How long a lost listener waits before connecting again. */
  reconnectMs?: number;
  /** A barrier the listener does not answer within this is a lost listener. */
  barrierTimeoutMs?: number;
  /** Records kept at most; the cache is emptied when full (keys are few per deployment). */
  maxRecords?: number;
}

/**
 * API key records as last read, kept while a LISTEN connection guarantees that every
 * change committed since (revocation, deletion) reaches us: migration 0020 notifies on
 * each, and the notification drops the copy.
 *
 * A notification is delivered asynchronously, so a cached record is only handed out after
 * a barrier: a round trip on the listening connection sent after the caller asked. The
 * server signals listeners before it acknowledges a commit, and a signalled backend sends
 * the pending notifications before it answers its next query; so when the barrier returns,
 * every change committed before the request arrived, on any instance, has been applied
 * here. Barriers are shared: callers waiting together share the next round trip.
 *
 * Without a listener (not yet connected, lost, or a barrier fails) nothing is cached or
 * handed out: the cache is dropped whole and callers read the database until LISTEN is
 * active again.
 */
export class ApiKeyCache {
  private readonly records = new Map<string, AuthKeyRecord>();
  /** Bumped on every invalidation and on losing the listener: a read that started earlier is not stored. */
  private generation = 0;
  private listener: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private retryAt = 0;
  private closed = false;
  private inFlight: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private readonly reconnectMs: number;
  private readonly barrierTimeoutMs: number;
  private readonly maxRecords: number;

  constructor(
    private readonly connection: pg.ClientConfig,
    options: KeyCacheOptions = {},
  ) {
    this.reconnectMs = options.reconnectMs ?? 1_000;
    this.barrierTimeoutMs = options.barrierTimeoutMs ?? 2_000;
    this.maxRecords = options.maxRecords ?? 10_000;
  }

  /** True while changes reach this instance (for tests and readiness). */
  get listening(): boolean {
    return this.listener !== undefined;
  }

  /** The listening connection's server process (for tests that cut it), undefined without one. */
  get listenerPid(): number | undefined {
    return (this.listener as (pg.Client & { processID?: number }) | undefined)?.processID;
  }

  /** Whether a record of `id` is held (for tests). */
  has(id: string): boolean {
    return this.records.has(id);
  }

  /**
   * The record of `id` if one is cached and still current when the barrier returns;
   * undefined means "read the database".
   */
  async get(id: string): Promise<AuthKeyRecord | undefined> {
    if (!this.listener) {
      this.ensureListening();
      return undefined;
    }
    if (!this.records.has(id)) return undefined;
    try {
      await this.barrier();
    } catch {
      this.lost(this.listener);
      return undefined;
    }
    return this.records.get(id);
  }

  /**
   * The record of `id` as held, without a barrier: only for a caller that confirms it in
   * the snapshot of its own work (KeyConfirmation). Nothing while the listener is down.
   */
  peek(id: string): AuthKeyRecord | undefined {
    if (!this.listener) {
      this.ensureListening();
      return undefined;
    }
    return this.records.get(id);
  }

  /** Drops the copy of `id`: the database was seen to hold something else. */
  forget(id: string): void {
    this.generation++;
    this.records.delete(id);
  }

  /** Call before reading a record from the database; pass the result to `store`. */
  startRead(): number | undefined {
    return this.listener ? this.generation : undefined;
  }

  /** Keeps a record read after `startRead` returned `ticket`, unless anything changed meanwhile. */
  store(ticket: number | undefined, record: AuthKeyRecord): void {
    if (ticket === undefined || ticket !== this.generation || !this.listener) return;
    if (this.records.size >= this.maxRecords) this.records.clear();
    this.records.set(record.id, record);
  }

  async close(): Promise<void> {
    this.closed = true;
    const listener = this.listener;
    this.drop();
    this.listener = undefined;
    await this.connecting?.catch(noop);
    await listener?.end().catch(noop);
  }

  private drop(): void {
    this.generation++;
    this.records.clear();
  }

  private ensureListening(): void {
    if (this.connecting || this.closed || Date.now() < this.retryAt) return;
    this.connecting = this.listen()
      .catch(() => {
        this.retryAt = Date.now() + this.reconnectMs;
      })
      .finally(() => {
        this.connecting = undefined;
      });
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ ...this.connection, query_timeout: this.barrierTimeoutMs });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (client !== this.listener) return;
      this.generation++;
      if (message.payload === undefined || message.payload === '*') this.records.clear();
      else this.records.delete(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${KEY_CHANNEL}`);
    } catch (err) {
      await client.end().catch(noop);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(noop);
      return;
    }
    this.drop();
    this.listener = client;
  }

  private lost(client: pg.Client | undefined): void {
    if (!client || client !== this.listener) return;
    this.listener = undefined;
    this.inFlight = undefined;
    this.queued = undefined;
    this.drop();
    this.retryAt = Date.now() + this.reconnectMs;
    client.end().catch(noop);
  }

  /** A round trip on the listener sent after this call: every earlier commit's notification is in. */
  private barrier(): Promise<void> {
    if (!this.queued) {
      const after = this.inFlight ?? Promise.resolve();
      const queued = after.then(noop, noop).then(() => {
        if (this.queued === queued) this.queued = undefined;
        const listener = this.listener;
        if (!listener) throw new Error('API key listener lost');
        const sent = listener.query('SELECT 1').then(noop);
        this.inFlight = sent;
        const clear = () => {
          if (this.inFlight === sent) this.inFlight = undefined;
        };
        sent.then(clear, clear);
        return sent;
      });
      this.queued = queued;
    }
    return this.queued;
  }
}
