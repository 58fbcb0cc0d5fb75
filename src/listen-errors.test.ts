import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { hostUnusable } from './listen-errors.js';

/** The error a real listen on `host` fails with. */
function listenError(host: string): Promise<unknown> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', resolve);
    server.listen({ host, port: 0 }, () => server.close(() => resolve(undefined)));
  });
}

describe('hostUnusable', () => {
  it('names HOST for an address that is not this machine', async () => {
    const err = await listenError('192.0.2.123');
    expect(hostUnusable(err, '192.0.2.123')?.message).toMatch(
      /^HOST=192\.0\.2\.123 cannot be listened on: it is not an address of this machine \(EADDRNOTAVAIL\)/,
    );
  });

  it('names HOST for a name that does not resolve', async () => {
    const err = await listenError('no-such-host.invalid');
    expect(hostUnusable(err, 'no-such-host.invalid')?.message).toMatch(
      /^HOST=no-such-host\.invalid cannot be listened on: the name does not resolve/,
    );
  });

  it('leaves other failures as they are', () => {
    expect(hostUnusable(Object.assign(new Error('x'), { code: 'EADDRINUSE' }), '127.0.0.1')).toBeUndefined();
    expect(hostUnusable(new Error('x'), '127.0.0.1')).toBeUndefined();
  });
});
