import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * How long requests in flight at the stop may take before their connections are closed
 * under them. Handlers are bounded by the database's timeouts (25 s statement, 30 s no
 * answer, src/db/pool.ts); what runs longer is a long response (a spreadsheet export) that
 * the client can ask for again. Well within the 90 s the systemd unit leaves the stop.
 */
export const STOP_GRACE_MS = 30_000;

/**
 * Closes every connection once no request is in flight when the server closes. Node's
 * `server.close()` closes the kept-alive connections that are idle at that instant and then
 * waits for the rest to close by themselves, which some never do in time: a connection a
 * client opened and has not sent a request on (a browser's preconnect, a port check, a
 * client that trickles its request line) counts as busy, and Node stops enforcing its
 * header and request timeouts once closing; a connection whose request was in flight stays
 * kept alive after its response for as long as the client keeps it (browsers: minutes).
 * Either held the stop for that long (test/http/stop-connections.test.ts).
 *
 * So from the stop on: requests in flight finish (STOP_GRACE_MS at most), and once none is,
 * every connection is closed after what was written to it, including one accepted in the
 * moment before the listener closed. A request a client writes onto one in that instant
 * meets a closed connection, as on any idle connection Node closes (docs/operations.md).
 */
export function closeConnectionsAtStop(app: FastifyInstance, graceMs = STOP_GRACE_MS): void {
  const open = new Set<Socket>();
  let inFlight = 0;
  let closing = false;

  const closeAll = (now: boolean) => {
    for (const socket of open) {
      // destroySoon: the end of the last response is written before the socket closes.
      if (now) socket.destroy();
      else socket.destroySoon();
    }
  };
  app.server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (closing && inFlight === 0) socket.destroySoon();
  });
  // One listener for every response, not a closure per request: this runs on every request.
  const requestEnded = () => {
    inFlight--;
    if (closing && inFlight === 0) afterNextRead(() => inFlight === 0 && closeAll(false));
  };
  app.server.on('request', (_req, res) => {
    inFlight++;
    res.once('close', requestEnded);
  });
  app.addHook('preClose', async () => {
    closing = true;
    if (inFlight === 0) {
      closeAll(false);
      return;
    }
    const grace = setTimeout(() => closeAll(true), graceMs);
    grace.unref();
    app.server.once('close', () => clearTimeout(grace));
  });
}

/**
 * Runs `fn` after the event loop's next poll for input. Node reads a request pipelined behind
 * one in flight only once that response is written (it resumes the socket then): the request,
 * already in the kernel's buffer, is read in the next poll and gets its 503 rather than a
 * closed connection. One setImmediate runs before that poll; the second, after it.
 */
function afterNextRead(fn: () => void): void {
  setImmediate(() => setImmediate(fn));
}
