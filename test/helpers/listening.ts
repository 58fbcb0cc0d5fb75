import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Serves `app` on a free port of the loopback interface, for tests that need real sockets; the port. */
export async function listenOnLoopback(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}
