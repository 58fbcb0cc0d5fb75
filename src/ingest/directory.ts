import type pg from 'pg';
import type { ReaderFamily } from './adapters/types.js';
import type { IngestLogger } from './limiter.js';
import { READERS_CHANNEL, type ReaderTopic } from './readers-repository.js';

/** A reader as ingest knows it: the organization it belongs to and how its payloads are read. */
export interface ReaderRef {
  id: number;
  orgId: number;
  family: ReaderFamily;
}

export interface DirectoryChange {
  added: string[];
  removed: string[];
  /**
   * Readers whose broker login changed: MQTT credentials rotated or revoked, topic changed
   * (a connection made before must not keep the old topic, which another reader may take),
   * or the reader gone.
   */
  loginsChanged: number[];
}

/** What the broker's access control needs of a live reader. */
export interface ReaderLogin {
  topic: string;
  orgId: number;
  /** null: no MQTT credentials (revoked). */
  passwordHash: string | null;
}

export interface ReaderDirectoryOptions {
  /** Where the live readers come from (ReaderService.liveTopics). */
  source: () => Promise<ReaderTopic[]>;
  /** For LISTEN on READERS_CHANNEL; without it the directory only polls. */
  pool?: pg.Pool;
  /** Poll interval, also the longest a missed notification can delay a change. */
  pollMs?: number;
  /** The shortest time between two reloads asked for by logins it did not know (refreshForMiss). */
  missReloadMs?: number;
  logger: IngestLogger;
}

/**
 * Which reader each topic belongs to, for the MQTT transports. Loaded at start, then kept
 * in sync by polling every few seconds and, sooner, on the readers service's NOTIFY.
 */
export class ReaderDirectory {
  private byTopic = new Map<string, ReaderRef>();
  private logins = new Map<number, ReaderLogin>();
  private readonly listeners = new Set<(change: DirectoryChange) => void>();
  private timer: NodeJS.Timeout | undefined;
  private listener: pg.PoolClient | undefined;
  private refreshing: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private missReload: Promise<void> | undefined;
  private lastMissReloadAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: ReaderDirectoryOptions) {}

  /** Loads the readers (a database failure here fails the start) and begins following changes. */
  async start(): Promise<void> {
    await this.load();
    await this.listen().catch((err: unknown) =>
      this.options.logger.warn({ err }, 'cannot LISTEN for reader changes; polling only'),
    );
    const tick = () => {
      if (this.stopped) return;
      if (!this.listener) void this.listen().catch(() => undefined);
      void this.refresh();
      this.timer = setTimeout(tick, this.options.pollMs ?? 5_000);
      this.timer.unref();
    };
    this.timer = setTimeout(tick, this.options.pollMs ?? 5_000);
    this.timer.unref();
  }

  lookup(topic: string): ReaderRef | undefined {
    return this.byTopic.get(topic);
  }

  /** The broker login of a live reader, as of the last load. */
  login(readerId: number): ReaderLogin | undefined {
    return this.logins.get(readerId);
  }

  topics(): string[] {
    return [...this.byTopic.keys()];
  }

  onChange(listener: (change: DirectoryChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reloads now; concurrent calls share one reload and a call during one queues another. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.again = false;
          await this.load();
        } while (this.again && !this.stopped);
      } catch (err) {
        this.options.logger.warn({ err }, 'reloading readers failed; keeping the previous set');
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /**
   * A reload for a login the directory does not know (a reader created a moment ago, a
   * missed notification): resolves once a load that began after the call has ended. Such
   * loads begin at most once every `missReloadMs` (1 s), however many logins miss: a
   * stream of bad logins, which anyone who can reach the broker can send, must not keep a
   * reload of every reader running; a genuine new reader waits a second at most.
   */
  refreshForMiss(): Promise<void> {
    if (!this.missReload) {
      const wait = this.lastMissReloadAt + (this.options.missReloadMs ?? 1_000) - Date.now();
      const waited =
        wait > 0 ? new Promise<void>((resolve) => setTimeout(resolve, wait).unref()) : Promise.resolve();
      this.missReload = waited.then(() => {
        // Logins that miss from here on need a load that begins after them: the next one.
        this.missReload = undefined;
        if (this.stopped) return;
        this.lastMissReloadAt = Date.now();
        return this.refresh();
      });
    }
    return this.missReload;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.refreshing;
    const client = this.listener;
    this.listener = undefined;
    if (client) {
      try {
        await client.query(`UNLISTEN ${READERS_CHANNEL}`);
        client.release();
      } catch (err) {
        client.release(err as Error);
      }
    }
  }

  private async load(): Promise<void> {
    const rows = await this.options.source();
    const next = new Map<string, ReaderRef>(
      rows.map((r) => [r.topic, { id: r.id, orgId: r.orgId, family: r.family }]),
    );
    const logins = new Map<number, ReaderLogin>(
      rows.map((r) => [r.id, { topic: r.topic, orgId: r.orgId, passwordHash: r.mqttPasswordHash ?? null }]),
    );
    const added = [...next.keys()].filter((t) => !this.byTopic.has(t));
    const removed = [...this.byTopic.keys()].filter((t) => !next.has(t));
    const loginsChanged = [...this.logins.entries()]
      .filter(([id, login]) => {
        const now = logins.get(id);
        return now?.passwordHash !== login.passwordHash || now.topic !== login.topic;
      })
      .map(([id]) => id);
    this.byTopic = next;
    this.logins = logins;
    if (this.stopped || (added.length === 0 && removed.length === 0 && loginsChanged.length === 0)) {
      return;
    }
    for (const listener of this.listeners) {
      try {
        listener({ added, removed, loginsChanged });
      } catch (err) {
        this.options.logger.error({ err }, 'reader directory listener failed');
      }
    }
  }

  private async listen(): Promise<void> {
    const pool = this.options.pool;
    if (!pool || this.listener || this.stopped) return;
    const client = await pool.connect();
    const drop = (err: Error) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      this.options.logger.warn({ err }, 'reader change notifications lost; listening again on the next poll');
      client.release(err);
    };
    client.on('error', drop);
    client.on('notification', (message) => {
      if (message.channel === READERS_CHANNEL) void this.refresh();
    });
    try {
      await client.query(`LISTEN ${READERS_CHANNEL}`);
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
    if (this.stopped) {
      client.release();
      return;
    }
    this.listener = client;
    // A change committed between the initial load and LISTEN would be missed otherwise.
    void this.refresh();
  }
}
