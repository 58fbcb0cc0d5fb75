import type { FastifyInstance } from 'fastify';

/**
 * The lame duck of an instance about to stop (TAGTRAIL_SHUTDOWN_DRAIN_SECONDS, docs/operations.md
 * "Stopping"): once `begin` is called, /readyz answers 503 so that load balancers take the
 * instance out of rotation, and every response says `Connection: close`, so that a kept-alive
 * client opens its next connection elsewhere instead of meeting this one closed by the stop.
 * Every route still serves. It never ends: the stop follows it.
 */
export class LameDuck {
  #draining = false;

  get draining(): boolean {
    return this.#draining;
  }

  begin(): void {
    this.#draining = true;
  }
}

/**
 * Closes each connection after its response while `lameDuck` drains. In onSend, so that a
 * request that came before the drain but answers during it closes its connection too. A
 * route that writes its own response (reply.hijack: the live event stream) is not covered;
 * the stop ends those.
 */
export function registerDrain(app: FastifyInstance, lameDuck: LameDuck): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    // Node reads the header: it ends the response's connection once the response is written.
    if (lameDuck.draining) reply.header('connection', 'close');
    done(null, payload);
  });
}
