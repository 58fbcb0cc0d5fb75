import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/** Ids are always ours: a caller-chosen id could collide with another request's. */
export const genReqId = () => randomUUID();

/** `x-request-id` on every response, and one log line per request carrying it. */
export function registerRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        org_id: request.principal?.orgId ?? request.session?.orgId,
      },
      'request',
    );
    done();
  });
}
