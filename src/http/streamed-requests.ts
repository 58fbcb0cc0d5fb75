import type { FastifyRequest } from 'fastify';

const streamed = new WeakSet<FastifyRequest>();

/**
 * Requests whose reply became an event stream (src/http/event-stream.ts): that module logs
 * and counts them when the stream ends, so the onResponse hooks, which see only some of
 * those endings and with the stream's whole life as the request's time, leave them out.
 */
export function markEventStream(request: FastifyRequest): void {
  streamed.add(request);
}

export function isEventStream(request: FastifyRequest): boolean {
  return streamed.has(request);
}
