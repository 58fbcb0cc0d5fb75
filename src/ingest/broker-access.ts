import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ReaderDirectory } from './directory.js';
import type { IngestLogger } from './limiter.js';
import { readerIdOfUsername, verifyMqttPassword } from './mqtt-credentials.js';

/** The broker user of the service itself (in-process clients); never a reader's. */
export const SERVICE_USERNAME = 'tagtrail-service';

/** MQTT 3.1.1 CONNACK return codes (MQTT 5 reason codes 0x85, 0x86, 0x88, 0x87). */
export const CONNACK = {
  identifierRejected: 2,
  serverUnavailable: 3,
  badUsernameOrPassword: 4,
  notAuthorized: 5,
} as const;

export class ConnectRefusedError extends Error {
  constructor(
    readonly returnCode: (typeof CONNACK)[keyof typeof CONNACK],
    message: string,
  ) {
    super(message);
    this.name = 'ConnectRefusedError';
  }
}

/** What access control needs of a broker connection (an Aedes client). */
export interface BrokerClient {
  readonly id: string;
  readonly closed: boolean;
  close(): void;
}

type Identity = { kind: 'service' } | { kind: 'reader'; readerId: number; topic: string; hash: string };

/**
 * Who may use the embedded broker, and for what (docs/operations.md, "Reader path
 * security"). Every client logs in:
 *  - a reader as `reader-<id>` with the password issued for it, and a client id that is
 *    its user name or starts with `<user name>-` (so no reader can take over another's
 *    session); it may publish to its own topic and subscribe to nothing else;
 *  - the service itself as `tagtrail-service`, with a password made at start and never
 *    stored; it may subscribe to anything and publish nothing.
 *
 * Passwords are checked against the reader directory, which follows the readers table
 * (NOTIFY on every change). When the directory learns that a reader's credentials or
 * topic changed or that it is gone, its live connections are closed at once: a connection
 * keeps the topic it logged in with, and a topic freed by a change may be another
 * organization's reader's a moment later. A login the
 * directory does not know yet (a reader created a moment ago, a missed notification)
 * makes it reload (at most once a second, however many miss) before the login is refused.
 */
export class BrokerAccess {
  /** The service's own password on the embedded broker, for in-process clients. */
  readonly servicePassword = randomBytes(32).toString('base64url');
  private directory: ReaderDirectory | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly identities = new Map<BrokerClient, Identity>();
  private readonly attachWaiters: Array<() => void> = [];

  /** Readers can log in from now on (the broker starts before the database is open). */
  attach(directory: ReaderDirectory, logger: IngestLogger): void {
    this.directory = directory;
    this.unsubscribe?.();
    this.unsubscribe = directory.onChange((change) => {
      if (change.loginsChanged.length > 0) this.revalidate(logger);
    });
    for (const resolve of this.attachWaiters.splice(0)) resolve();
  }

  /**
   * Stops following reader changes (the service is stopping). Logins still check against
   * the readers last loaded until the broker closes: a refused CONNACK would make many
   * clients give up for good, while a closed connection makes them reconnect later.
   */
  detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /**
   * The directory, once attached. A reader logging in while the service starts waits for
   * it rather than being refused (see detach); `signal` (the broker's login timeout) ends
   * the wait, and takes the waiter off the list, so that logins given up on do not pile up
   * while the database stays unreachable.
   */
  private async readerDirectory(signal?: AbortSignal): Promise<ReaderDirectory> {
    if (!this.directory) {
      await new Promise<void>((resolve, reject) => {
        const attached = () => {
          signal?.removeEventListener('abort', abandoned);
          resolve();
        };
        const abandoned = () => {
          const at = this.attachWaiters.indexOf(attached);
          if (at >= 0) this.attachWaiters.splice(at, 1);
          reject(signal?.reason);
        };
        if (signal?.aborted) return abandoned();
        signal?.addEventListener('abort', abandoned, { once: true });
        this.attachWaiters.push(attached);
      });
    }
    return this.directory!;
  }

  /**
   * Resolves when the client may connect; rejects with a ConnectRefusedError otherwise, or
   * with `signal`'s reason once it is aborted (the broker gave up on the login and closed
   * the connection): a login given up on is never registered.
   */
  async authenticate(
    client: BrokerClient,
    username?: string,
    password?: Buffer,
    signal?: AbortSignal,
  ): Promise<void> {
    if (username === undefined || username === '' || password === undefined) {
      throw new ConnectRefusedError(CONNACK.notAuthorized, 'a user name and password are required');
    }
    if (username === SERVICE_USERNAME) {
      const expected = Buffer.from(this.servicePassword);
      if (password.length !== expected.length || !timingSafeEqual(password, expected)) {
        throw new ConnectRefusedError(CONNACK.badUsernameOrPassword, 'bad user name or password');
      }
      this.identities.set(client, { kind: 'service' });
      return;
    }
    const readerId = readerIdOfUsername(username);
    if (readerId === null) {
      throw new ConnectRefusedError(CONNACK.badUsernameOrPassword, 'bad user name or password');
    }
    const directory = await this.readerDirectory(signal);
    let login = directory.login(readerId);
    if (!login?.passwordHash || !verifyMqttPassword(password, login.passwordHash)) {
      // Not known yet (or rotated a moment ago): ask the database before refusing.
      await directory.refreshForMiss();
      signal?.throwIfAborted();
      login = directory.login(readerId);
    }
    // The check and the registration below run without a pause in between, so a change the
    // directory loads later always finds this connection to close.
    if (!login?.passwordHash || !verifyMqttPassword(password, login.passwordHash)) {
      throw new ConnectRefusedError(CONNACK.badUsernameOrPassword, 'bad user name or password');
    }
    if (client.id !== username && !client.id.startsWith(`${username}-`)) {
      throw new ConnectRefusedError(
        CONNACK.identifierRejected,
        `the client id must be ${username} or start with ${username}-`,
      );
    }
    this.identities.set(client, { kind: 'reader', readerId, topic: login.topic, hash: login.passwordHash });
  }

  /** Whether the client may publish to `topic` (its will message included). */
  mayPublish(client: BrokerClient, topic: string): boolean {
    return this.ownTopic(this.identities.get(client), topic);
  }

  /** Whether the client may subscribe to the filter `topic`. */
  maySubscribe(client: BrokerClient, topic: string): boolean {
    const identity = this.identities.get(client);
    if (identity?.kind === 'service') return true;
    // Its own topic only, spelled out: no wildcards, no $share or $SYS.
    return this.ownTopic(identity, topic);
  }

  /** The reader a client logged in as; undefined for the service's own login or an unknown client. */
  readerOf(client: BrokerClient): number | undefined {
    const identity = this.identities.get(client);
    return identity?.kind === 'reader' ? identity.readerId : undefined;
  }

  /**
   * Whether `topic` is the reader's topic both at login and now. The directory's is asked
   * too because a connection is closed only when a change reaches the listener (see
   * revalidate), which a stopping service no longer follows (detach).
   */
  private ownTopic(identity: Identity | undefined, topic: string): boolean {
    return (
      identity?.kind === 'reader' &&
      identity.topic === topic &&
      this.directory?.login(identity.readerId)?.topic === topic
    );
  }

  /** The readers with a live connection now (docs/metrics.md, the readers page's "connected"). */
  connectedReaders(): Set<number> {
    const ids = new Set<number>();
    for (const [client, identity] of this.identities) {
      if (identity.kind === 'reader' && !client.closed) ids.add(identity.readerId);
    }
    return ids;
  }

  forget(client: BrokerClient): void {
    this.identities.delete(client);
  }

  /** Closes every reader connection whose credentials or topic are no longer the current ones. */
  private revalidate(logger: IngestLogger): void {
    const directory = this.directory;
    if (!directory) return;
    for (const [client, identity] of this.identities) {
      if (client.closed) {
        this.identities.delete(client);
        continue;
      }
      if (identity.kind !== 'reader') continue;
      const login = directory.login(identity.readerId);
      if (login?.passwordHash === identity.hash && login.topic === identity.topic) continue;
      // Forgotten before closing, so its will message (checked on close) is refused too.
      this.identities.delete(client);
      logger.info(
        { readerId: identity.readerId, clientId: client.id },
        login?.passwordHash === identity.hash
          ? 'reader topic changed; connection closed, it logs in again for the new topic'
          : 'reader MQTT credentials rotated or revoked; connection closed',
      );
      client.close();
    }
  }
}
