import type { ServerResponse } from 'node:http';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { badRequest } from '../../errors.js';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import type { InternalServices } from '../../internal-services.js';

/** A comment line now and then keeps proxies and the browser from closing a quiet stream. */
const HEARTBEAT_MS = 25_000;
/** setTimeout's largest delay; sessions last 12 hours, far less. */
const MAX_TIMER_MS = 2_147_483_647;

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
    const open = new Set<ServerResponse>();
    // Streams never end by themselves: closing the server ends them, or it would wait forever.
    app.addHook('preClose', async () => {
      for (const res of open) res.end();
    });

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
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-request-id': String(request.id),
          // Tells buffering proxies (nginx) to pass each event on at once.
          'x-accel-buffering': 'no',
        });
        // HEAD gets the stream's headers only: Node drops a HEAD's body writes, so a stream
        // left open would never send even those.
        if (request.method === 'HEAD') {
          res.end();
          return;
        }
        open.add(res);
        res.write('retry: 3000\n\n');
        const unsubscribe = s.live.subscribe(orgId, (change) => {
          const { types, asset_ids, location_ids, truncated } = change;
          res.write(
            `event: change\ndata: ${JSON.stringify({ types, asset_ids, location_ids, truncated })}\n\n`,
          );
        });
        const end = () => {
          if (!res.writableEnded) res.end();
        };
        // A failed check (database unreachable) keeps the stream; the next notice checks again.
        const check = () =>
          s.sessions.isLive(orgId, session.sessionId).then(
            (live) => {
              if (!live) end();
            },
            () => undefined,
          );
        const unwatch = s.live.watchSessions(orgId, session.userId, () => void check());
        const expiry = setTimeout(end, Math.min(MAX_TIMER_MS, session.expiresAt.getTime() - Date.now()));
        const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
        // 'finish' when ended here, 'close' when the client went away: both stop everything.
        const stop = () => {
          clearInterval(heartbeat);
          clearTimeout(expiry);
          unsubscribe();
          unwatch();
          open.delete(res);
        };
        res.on('finish', stop);
        res.on('close', stop);
        await s.live.ready();
        // A session ended between the request's authentication and the LISTEN: no notice came.
        await check();
        if (!res.writableEnded) res.write('event: ready\ndata: {}\n\n');
      },
    );
  };
