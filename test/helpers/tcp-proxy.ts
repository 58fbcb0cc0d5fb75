import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP proxy between the service and its PostgreSQL that a test can break the way real
 * outages break connections: refuse new ones (server down), cut the open ones (restart),
 * or go silent (host or network gone: nothing answers, nothing is refused).
 */
export interface TcpProxy {
  port: number;
  /** Cuts every open connection and refuses new ones (closes the listening socket). */
  down(): Promise<void>;
  /** Accepts connections but forwards nothing either way, like a host that vanished. */
  blackhole(): void;
  /** Forwards again (listening again on the same port after down()). */
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let silent = false;
  let server: Server | undefined;
  let port = 0;

  const onConnection = (client: Socket) => {
    if (silent) {
      // Held open and never answered; destroyed on up() or close().
      const held = client;
      pairs.add([held, held]);
      held.on('error', () => undefined);
      return;
    }
    const upstream = new Socket();
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.connect(target.port, target.host);
    client.on('data', (chunk) => {
      if (!silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!silent) client.write(chunk);
    });
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer(onConnection);
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        const address = s.address();
        if (typeof address === 'object' && address) port = address.port;
        server = s;
        resolve();
      });
    });
  const cutAll = () => {
    for (const [a, b] of pairs) {
      a.destroy();
      b.destroy();
    }
    pairs.clear();
  };
  const stopListening = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = undefined;
      if (!s) return resolve();
      s.close(() => resolve());
    });

  await listen();
  return {
    get port() {
      return port;
    },
    async down() {
      silent = false;
      const closed = stopListening();
      cutAll();
      await closed;
    },
    blackhole() {
      silent = true;
    },
    async up() {
      silent = false;
      cutAll();
      if (!server) await listen();
    },
    async close() {
      const closed = stopListening();
      cutAll();
      await closed;
    },
  };
}
