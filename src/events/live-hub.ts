import pg from 'pg';
import { LIVE_CHANNEL, type LiveChange } from './dispatcher.js';

type Listener = (change: LiveChange) => void;

/**
 * Sessions that end (migration 0045's trigger on web_sessions): `{org_id, user_id}` of
 * the person whose sessions were revoked, when the revoking transaction commits.
 */
export const SESSIONS_CHANNEL = 'tagtrail_sessions';

/**
 * Fans the dispatcher's change notices (LISTEN tagtrail_events) out to this instance's
 * live views, each organization's to its own subscribers only. The LISTEN connection is
 * opened with the first subscriber and reopened after a loss; while it is down the views
 * miss notices (they are hints to refresh, never data), and hear `reconnected` after.
 * The same connection hears which people's sessions ended, so a stream of a signed-out
 * or removed person ends at once on every instance.
 */
export class LiveHub {
  private readonly listeners = new Map<number, Set<Listener>>();
  /** By `${orgId}:${userId}`: what to call when some session of that person ended. */
  private readonly sessionWatchers = new Map<string, Set<() => void>>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  /** A connection was lost: notices may have been missed until the next one is in place. */
  private missed = false;

  constructor(
    private readonly connection: pg.ClientConfig,
    private readonly reconnectMs = 1_000,
  ) {}

  /** Starts hearing the organization's changes; returns the unsubscribe function. */
  subscribe(orgId: number, listener: Listener): () => void {
    const set = this.listeners.get(orgId) ?? new Set<Listener>();
    this.listeners.set(orgId, set);
    set.add(listener);
    void this.connect();
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(orgId);
    };
  }

  /**
   * Calls `check` whenever a session of the person ends (any of theirs: the caller checks
   * whether it is its own), and after the LISTEN connection was lost and is back, since
   * notices may have been missed meanwhile. Returns the function that stops it.
   */
  watchSessions(orgId: number, userId: number, check: () => void): () => void {
    const key = `${orgId}:${userId}`;
    const set = this.sessionWatchers.get(key) ?? new Set<() => void>();
    this.sessionWatchers.set(key, set);
    set.add(check);
    void this.connect();
    return () => {
      set.delete(check);
      if (set.size === 0) this.sessionWatchers.delete(key);
    };
  }

  /** Resolves once the LISTEN is in place (tests wait for it before publishing). */
  ready(): Promise<void> {
    return this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private emit(change: LiveChange): void {
    for (const listener of this.listeners.get(change.org_id) ?? []) listener(change);
  }

  private connect(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.client) return Promise.resolve();
    this.connecting ??= (async () => {
      const client = new pg.Client(this.connection);
      client.on('error', () => this.lost(client));
      client.on('end', () => this.lost(client));
      client.on('notification', (message) => {
        try {
          const payload = JSON.parse(message.payload ?? '');
          if (message.channel === SESSIONS_CHANNEL) this.sessionsEnded(payload.org_id, payload.user_id);
          else this.emit(payload as LiveChange);
        } catch {
          // Not one of ours: ignored.
        }
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${LIVE_CHANNEL}; LISTEN ${SESSIONS_CHANNEL}`);
        this.client = client;
      } catch {
        await client.end().catch(() => undefined);
        this.lost(undefined);
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  private sessionsEnded(orgId: number, userId: number): void {
    for (const check of this.sessionWatchers.get(`${orgId}:${userId}`) ?? []) check();
  }

  private lost(client: pg.Client | undefined): void {
    if (client && this.client !== client) return;
    // Set until a reconnection succeeds, however many attempts fail in between.
    if (this.client !== undefined) this.missed = true;
    this.client = undefined;
    if (this.closed || (this.listeners.size === 0 && this.sessionWatchers.size === 0)) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      void this.connect().then(() => {
        if (!this.missed || !this.client) return;
        this.missed = false;
        for (const set of this.sessionWatchers.values()) for (const check of set) check();
        for (const orgId of this.listeners.keys()) {
          this.emit({
            org_id: orgId,
            types: ['reconnected'],
            asset_ids: [],
            location_ids: [],
            truncated: true,
          });
        }
      });
    }, this.reconnectMs);
    this.retry.unref();
  }
}
