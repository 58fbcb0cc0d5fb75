import type { Server, Socket } from 'node:net';

/**
 * How much of each reader's socket the embedded broker buffers. Aedes parses what one read
 * of a socket gives and reads again only once every PUBLISH of it is stored and
 * acknowledged, so a reader with a backlog is served chunk by chunk, one chunk waiting for
 * its commit before the next is read: the buffer is how many of its messages one group
 * commit can take. Node's default (16 KiB on 20, 64 KiB from 22) is a few messages of 100
 * reads; 1 MiB made one reader's backlog 41,000-47,000 reads/s, 4 MiB 70,000-76,000
 * (docs/ingest-history.md, "A reader's socket buffer").
 *
 * It is memory per reader with a backlog, and readers may be many: each connection gets
 * `total / connections` as it connects (the connections then open counted), at most `max`
 * and at least `min`, so a few readers get large buffers and fifty share about `total`.
 */
export const READER_SOCKET_BUFFER = { max: 4 * 1024 * 1024, total: 32 * 1024 * 1024, min: 256 * 1024 };

export type SocketBufferPolicy = typeof READER_SOCKET_BUFFER;

/** The read buffer of a connection that makes `connections` open at once (itself included). */
export function readerSocketBuffer(
  connections: number,
  policy: SocketBufferPolicy = READER_SOCKET_BUFFER,
): number {
  const share = Math.floor(policy.total / Math.max(1, connections));
  return Math.max(policy.min, Math.min(policy.max, share));
}

/**
 * A net.Server gives each accepted socket its `highWaterMark` (the option of
 * createServer, read again at every connection: test/ingest/socket-budget.test.ts checks
 * that it still is), so setting it after each connection and close sizes the next one.
 */
type Sized = Server & { highWaterMark: number };

/** Tracks the broker's sockets and sizes each new one's read buffer by readerSocketBuffer. */
export class SocketBudget {
  private readonly sockets = new Set<Socket>();
  private readonly servers: Server[] = [];

  constructor(private readonly policy: SocketBufferPolicy = READER_SOCKET_BUFFER) {}

  /** Sizes the sockets `server` accepts from now on. */
  attach(server: Server): void {
    this.servers.push(server);
    this.resize();
  }

  /** Every socket the broker handles, on any of the servers. */
  add(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.resize();
    });
    this.resize();
  }

  /** Open sockets, for a stop that must not wait on a half-open one. */
  get open(): ReadonlySet<Socket> {
    return this.sockets;
  }

  private resize(): void {
    const next = readerSocketBuffer(this.sockets.size + 1, this.policy);
    for (const server of this.servers) (server as Sized).highWaterMark = next;
  }
}
