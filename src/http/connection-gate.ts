import type { Server, Socket } from 'node:net';

/**
 * Counts open connections, in all and by remote address, and admits new ones within the
 * limits: the embedded broker's (src/ingest/connection-gate.ts) and the HTTP server's
 * (./connections.ts).
 */
export class ConnectionGate {
  private open = 0;
  private readonly byAddress = new Map<string, number>();

  constructor(private readonly limits: { total: number; perAddress: number }) {}

  /** Whether `socket` may be served; if so it is counted until it closes. */
  admit(socket: Socket): boolean {
    // A socket already reset by its peer has no address; it closes at once anyway.
    const address = socket.remoteAddress ?? '';
    const fromAddress = this.byAddress.get(address) ?? 0;
    if (this.open >= this.limits.total || fromAddress >= this.limits.perAddress) return false;
    this.open += 1;
    this.byAddress.set(address, fromAddress + 1);
    socket.once('close', () => {
      this.open -= 1;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left > 0) this.byAddress.set(address, left);
      else this.byAddress.delete(address);
    });
    return true;
  }
}

/**
 * Bounds the HTTP server's connections from one remote address: each costs a file descriptor
 * for as long as the headers timeout lets a silent connection stay, so without a bound one
 * client opening connections faster than that cut them (a few thousand a second) held
 * nearly every descriptor of the process, which the broker's readers and the database pool
 * need too (17,500 of 20,000 from one address in the security audit). Connections past the
 * bound are closed at once, before a byte is read. Behind a reverse proxy
 * (TAGTRAIL_TRUST_PROXY) every connection comes from the proxy, which bounds its clients
 * itself, so the server is not given a bound then.
 */
export function limitConnectionsPerAddress(server: Server, perAddress: number): void {
  const gate = new ConnectionGate({ total: Number.POSITIVE_INFINITY, perAddress });
  server.on('connection', (socket: Socket) => {
    if (!gate.admit(socket)) socket.destroy();
  });
}
