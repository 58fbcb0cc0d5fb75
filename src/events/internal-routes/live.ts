import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ApiError, badRequest } from '../../errors.js';
import type { EventStream } from '../../http/event-stream.js';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import type { InternalServices } from '../../internal-services.js';

/** A comment line now and then keeps proxies and the browser from closing a quiet stream. */
const HEARTBEAT_MS = 25_000;
/** setTimeout's largest delay; sessions last 12 hours, far less. */
const MAX_TIMER_MS = 2_147_483_647;
/**
 * Streams one session keeps open: a browser opens one per tab, and holds at most six
 * connections to a host anyway. A further one ends the session's oldest, so that a reload
 * or a reconnection whose old socket is not yet seen dead is never refused.
 */
export const STREAMS_PER_SESSION = 8;
/**
 * Streams one process keeps open in all: each holds a socket (a file descriptor, 1,024 of
 * them by default on many systems) and some memory for as long as it lasts. Beyond it a
 * stream is refused with 503 and Retry-After; EventSource gives up on it, and the web app
 * reopens a stream it gave up on a few seconds later (web/src/live.ts).
 */
export const STREAMS_PER_PROCESS = 1000;

/**
 * GET /internal/live: Server-Sent Events telling the web app what changed in the session's
 * organization (docs/events.md "Live views"): `event: change` with the event types and
 * the ids of the assets and locations concerned. They are hints to refresh what a page
 * shows, not the data itself, so a view fetches through the usual routes and its
 * permissions. The browser's EventSource reconnects by itself after a drop.
 *
 * A stream is authenticated once, when it opens, and then never ends by itself: so it is
 * ended here when its session does (sign-out, a password change or reset, the member's
 * removal: the LiveHub hears it from any instance) and when the session expires. The
 * browser's reconnection then meets a 401.
 */
export const liveRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    // This route's streams (the server's app.eventStreams holds every route's, and ends them at close).
    const open = new Set<EventStream>();
    // Each session's streams, oldest first (a Set keeps the order they were added).
    const bySession = new Map<string, Set<EventStream>>();

    app.get(
      '/internal/live',
      {
        config: { role: 'viewer' },
        schema: { querystring: Type.Object({}, { additionalProperties: false }) },
      },
      async (request, reply) => {
        if (!(request.headers.accept ?? '').includes('text/event-stream')) {
          throw badRequest('This is an event stream: send Accept: text/event-stream (EventSource does)');
        }
        const session = sessionOf(request);
        const { orgId } = session;
        const own = bySession.get(session.sessionId) ?? new Set<EventStream>();
        // At the bound, only a session replacing its own oldest stream (at its share) opens one.
        if (open.size >= STREAMS_PER_PROCESS && own.size < STREAMS_PER_SESSION) {
          throw new ApiError(
            'service_unavailable',
            'Too many live streams are open on this server; try again later',
            undefined,
            {
              'retry-after': '30',
            },
          );
        }
        const headers = {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-request-id': String(request.id),
          // Tells buffering proxies (nginx) to pass each event on at once.
          'x-accel-buffering': 'no',
        };
        // HEAD gets the stream's headers only: Node drops a HEAD's body writes, so a stream
        // left open would never send even those. It is a plain request, logged and counted as one.
        if (request.method === 'HEAD') {
          reply.hijack();
          reply.raw.writeHead(200, headers).end();
          return;
        }
        // Over a session's share, its oldest stream makes room (ending it runs its stop).
        for (const oldest of own) {
          if (own.size < STREAMS_PER_SESSION) break;
          own.delete(oldest);
          oldest.end('replaced');
        }
        const stream = app.eventStreams.open(request, reply, headers);
        const res = stream.raw;
        open.add(stream);
        own.add(stream);
        bySession.set(session.sessionId, own);
        stream.write('retry: 3000\n\n');
        const unsubscribe = s.live.subscribe(orgId, (change) => {
          const { types, asset_ids, location_ids, truncated } = change;
          stream.write(
            `event: change\ndata: ${JSON.stringify({ types, asset_ids, location_ids, truncated })}\n\n`,
          );
        });
        // A failed check (database unreachable) keeps the stream; the next notice checks again.
        const check = () =>
          s.sessions.isLive(orgId, session.sessionId).then(
            (live) => {
              if (!live) stream.end('session_ended');
            },
            () => undefined,
          );
        const unwatch = s.live.watchSessions(orgId, session.userId, () => void check());
        const expiry = setTimeout(
          () => stream.end('session_expired'),
          Math.min(MAX_TIMER_MS, session.expiresAt.getTime() - Date.now()),
        );
        const heartbeat = setInterval(() => stream.write(': keep-alive\n\n'), HEARTBEAT_MS);
        // 'finish' when ended here, 'close' when the client went away: both stop everything.
        const stop = () => {
          clearInterval(heartbeat);
          clearTimeout(expiry);
          unsubscribe();
          unwatch();
          open.delete(stream);
          own.delete(stream);
          if (own.size === 0 && bySession.get(session.sessionId) === own) bySession.delete(session.sessionId);
        };
        res.on('finish', stop);
        res.on('close', stop);
        await s.live.ready();
        // A session ended between the request's authentication and the LISTEN: no notice came.
        await check();
        stream.write('event: ready\ndata: {}\n\n');
      },
    );
  };
