import { type AddressInfo, createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Serves `app` on a free port of the loopback interface, for tests that need real sockets; the port. */
export async function listenOnLoopback(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

/** A loopback port nothing listens on (taken, then let go): a server that is down. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
