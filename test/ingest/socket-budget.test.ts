import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedBroker } from '../../src/ingest/broker.js';
import { READER_SOCKET_BUFFER, readerSocketBuffer, SocketBudget } from '../../src/ingest/socket-budget.js';

const MiB = 1024 * 1024;
const policy = { max: 4 * MiB, total: 6 * MiB, min: 1 * MiB };

describe('readerSocketBuffer', () => {
  it('gives a few readers the most, shares the total among many, and never less than the least', () => {
    expect(readerSocketBuffer(1, policy)).toBe(4 * MiB);
    expect(readerSocketBuffer(2, policy)).toBe(3 * MiB);
    expect(readerSocketBuffer(3, policy)).toBe(2 * MiB);
    expect(readerSocketBuffer(6, policy)).toBe(1 * MiB);
    expect(readerSocketBuffer(100, policy)).toBe(1 * MiB);
    expect(readerSocketBuffer(0, policy)).toBe(4 * MiB);
  });

  it('by default: 4 MiB for up to eight readers, 640 KiB each for fifty', () => {
    expect(readerSocketBuffer(1)).toBe(4 * MiB);
    expect(readerSocketBuffer(8)).toBe(4 * MiB);
    expect(readerSocketBuffer(50)).toBe(Math.floor((32 * MiB) / 50));
    expect(readerSocketBuffer(1_000)).toBe(READER_SOCKET_BUFFER.min);
  });
});

/** Connects a client to `server` and resolves with the server's side of the connection. */
function accept(server: Server, accepted: Socket[]): Promise<Socket> {
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('not listening');
  return new Promise((resolve, reject) => {
    server.once('connection', (socket: Socket) => {
      accepted.push(socket);
      resolve(socket);
    });
    const client = connect(address.port, '127.0.0.1');
    client.on('error', reject);
    clients.push(client);
  });
}

const clients: Socket[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.destroy();
});

describe('SocketBudget', () => {
  it('sizes each accepted socket by the connections open when it came, and frees a share on close', async () => {
    const budget = new SocketBudget(policy);
    const accepted: Socket[] = [];
    const server = createServer((socket) => budget.add(socket));
    budget.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const first = await accept(server, accepted);
      const second = await accept(server, accepted);
      const third = await accept(server, accepted);
      expect([first, second, third].map((s) => s.readableHighWaterMark)).toEqual([4 * MiB, 3 * MiB, 2 * MiB]);
      expect(budget.open.size).toBe(3);

      const closed = [first, second].map((s) => new Promise((resolve) => s.once('close', resolve)));
      first.destroy();
      second.destroy();
      await Promise.all(closed);
      expect(budget.open.size).toBe(1);
      const fourth = await accept(server, accepted);
      expect(fourth.readableHighWaterMark).toBe(3 * MiB);
    } finally {
      for (const s of accepted) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is what the embedded broker gives its readers', async () => {
    const broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0, socketBuffer: policy });
    try {
      for (let i = 0; i < 3; i++) {
        const client = connect(broker.port, '127.0.0.1');
        clients.push(client);
        await new Promise((resolve) => client.once('connect', resolve));
        await expect.poll(() => broker.socketBuffers().length).toBe(i + 1);
      }
      expect(broker.socketBuffers()).toEqual([4 * MiB, 3 * MiB, 2 * MiB]);
    } finally {
      await broker.stop();
    }
  });
});
