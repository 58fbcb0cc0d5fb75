import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isEventStream } from '../streamed-requests.js';

/** Ids are always ours: a caller-chosen id could collide with another request's. */
export const genReqId = () => randomUUID();

/** `x-request-id` on every response, and one log line per request carrying it. */
export function registerRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    // An event stream's line is written when it ends, with why (src/http/event-stream.ts).
    if (!isEventStream(request)) {
      request.log.info(requestLogFields(request, reply.statusCode, reply.elapsedTime), 'request');
    }
    done();
  });
}

/** The fields of a request's log line; `ms` is how long it took, in milliseconds. */
export function requestLogFields(request: FastifyRequest, status: number, ms: number) {
  return {
    method: request.method,
    path: request.url.split('?')[0],
    status,
    ms: Math.round(ms * 100) / 100,
    org_id: request.principal?.orgId ?? request.session?.orgId,
  };
}
