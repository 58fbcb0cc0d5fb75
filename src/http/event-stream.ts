import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type HttpMetrics, UNMATCHED_ROUTE } from './metrics.js';
import { requestLogFields } from './plugins/request-id.js';
import { markEventStream } from './streamed-requests.js';

/**
 * Why an event stream ended, in its log line and in the `reason` label of
 * `tagtrail_http_stream_duration_seconds` (docs/metrics.md).
 */
export type StreamEndReason =
  /** The client went away (closed the tab, lost the network): the socket closed first. */
  | 'client_closed'
  /** The session opened one stream more than its share: its oldest made room. */
  | 'replaced'
  /** The session was signed out, revoked or its member removed. */
  | 'session_ended'
  | 'session_expired'
  /** The server is stopping. */
  | 'shutdown'
  /** The response failed (a write error on the socket). */
  | 'error';

/** One open event stream: what a route writes to, and how it ends it, saying why. */
export interface EventStream {
  readonly raw: ServerResponse;
  /** True once ended, by either side: writes are dropped then. */
  readonly ended: boolean;
  write(chunk: string): void;
  /** Ends the stream from the server's side; the first reason given is the one recorded. */
  end(reason: StreamEndReason): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    eventStreams: EventStreams;
  }
}

/**
 * The event streams of one server: a reply hijacked to write `text/event-stream` never
 * reaches Fastify's onResponse when the client goes away, and reaches it with the whole
 * stream's life as its time when the server ends it. So streams are kept out of the
 * request hooks (src/http/streamed-requests.ts) and accounted here instead, once, when they end: one
 * request in the request metrics, with the time until its headers went out (what the
 * caller waited for, as for any request); its life and the reason it ended in a series of
 * its own; the number open; and one request log line with its life and the reason.
 */
export class EventStreams {
  readonly #open = new Set<EventStream>();

  constructor(private readonly metrics?: HttpMetrics) {}

  get size(): number {
    return this.#open.size;
  }

  /** Hijacks the reply and sends the stream's status line and headers (200). */
  open(request: FastifyRequest, reply: FastifyReply, headers: OutgoingHttpHeaders): EventStream {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, headers);
    markEventStream(request);
    const openedAfter = reply.elapsedTime;
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    let reason: StreamEndReason | undefined;
    let accounted = false;
    const account = (why: StreamEndReason) => {
      if (accounted) return;
      accounted = true;
      this.#open.delete(stream);
      const lifetime = reply.elapsedTime;
      this.metrics?.streamsOpen(-1);
      this.metrics?.observeRequest({
        method: request.method,
        route,
        status: res.statusCode,
        seconds: openedAfter / 1000,
      });
      this.metrics?.observeStreamEnd({ route, reason: why, seconds: lifetime / 1000 });
      request.log.info({ ...requestLogFields(request, res.statusCode, lifetime), reason: why }, 'request');
    };
    const stream: EventStream = {
      raw: res,
      get ended() {
        return accounted || res.writableEnded || res.destroyed;
      },
      write(chunk) {
        if (!this.ended) res.write(chunk);
      },
      end(why) {
        if (this.ended) return;
        reason = why;
        res.end();
        // Accounted now, not at 'close': a socket slow to drain would keep the gauge up.
        account(why);
      },
    };
    res.on('error', () => {
      reason ??= 'error';
    });
    // 'close' comes after every ending; without one of ours first, the client went away.
    res.on('close', () => account(reason ?? (res.errored ? 'error' : 'client_closed')));
    this.#open.add(stream);
    this.metrics?.streamsOpen(1);
    return stream;
  }

  /** Ends every open stream: they never end by themselves, and closing the server would wait. */
  endAll(reason: StreamEndReason): void {
    for (const stream of [...this.#open]) stream.end(reason);
  }
}

/** Every route's `app.eventStreams`, with the streams ended (reason `shutdown`) when the server closes. */
export function registerEventStreams(app: FastifyInstance, metrics?: HttpMetrics): void {
  const streams = new EventStreams(metrics);
  app.decorate('eventStreams', streams);
  app.addHook('preClose', async () => streams.endAll('shutdown'));
}
