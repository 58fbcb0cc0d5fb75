import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/**
 * A local webhook receiver: records every request and answers `answer(n)` for the n-th
 * (0-based) one, after an optional delay. Listens on 127.0.0.1 on a free port.
 */
export async function startReceiver(
  answer: (n: number, body: string) => number | Promise<number> = () => 204,
): Promise<{ url: string; received: Received[]; close(): Promise<void>; server: Server }> {
  const received: Received[] = [];
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString();
      const status = await answer(n++, body);
      received.push({ headers: req.headers, body, status });
      res.statusCode = status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
