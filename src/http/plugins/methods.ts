import { type IncomingMessage, METHODS, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify';
import { ApiError } from '../../errors.js';
import { sendError } from '../error-handler.js';
import { HEALTH_PATHS } from '../health.js';
import { METRICS_PATH } from '../metrics.js';

const COMMON_METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Every other method Node's parser accepts (TRACE, QUERY, PROPFIND, CONNECT, …): API-SPEC
 * "Endpoints" wants 405 and `Allow` for each method a path does not declare, and a path
 * answered these with 404 (or 400).
 */
export const UNCOMMON_METHODS: readonly string[] = METHODS.filter(
  (m) => !(COMMON_METHODS as string[]).includes(m),
);

const ALL_METHODS: HTTPMethods[] = [...COMMON_METHODS, ...(UNCOMMON_METHODS as HTTPMethods[])];

/**
 * Lets the router take the uncommon methods; call before any route is added. No route here
 * declares one, so each is only ever answered 405 and routed as taking no body (a body
 * sent is dropped unread): Fastify would otherwise answer a QUERY without a Content-Type
 * 400 before any route (RFC 10008), where the path's 405 is the answer.
 */
export function acceptAllMethods(app: FastifyInstance): void {
  for (const method of UNCOMMON_METHODS)
    app.addHttpMethod(method, { hasBody: false, overrideExisting: true });
  app.server.on('connect', (req: IncomingMessage, socket: Duplex) =>
    answerConnect(app, req, socket as Socket),
  );
}

/**
 * Node hands a CONNECT to the server's `connect` event (for tunnels), not to its requests,
 * and without a listener closes the connection unanswered. It is routed like any other
 * request instead: a path answers 405 with `Allow`, anything else (a CONNECT's usual
 * `host:port`) 404, in the envelope; then the connection closes, since after a CONNECT the
 * socket would belong to the tunnel.
 */
function answerConnect(app: FastifyInstance, req: IncomingMessage, socket: Socket): void {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket);
  res.once('finish', () => {
    res.detachSocket(socket);
    socket.end();
  });
  app.routing(req, res);
}

/**
 * Collects every route as it is registered; `registerMethodNotAllowed` then answers each
 * method a path does not declare with 405 and an `Allow` header (OPTIONS included: CORS
 * is not supported, so there is no preflight to answer).
 */
export interface PublicRoute {
  method: string;
  url: string;
  /** Scopes the route requires; undefined for routes that need no API key. */
  scopes?: string[];
  hasBody: boolean;
}

/** An /internal/ route (docs/web-app.md); `signedOut` ones need neither session nor CSRF token. */
export interface InternalRoute {
  method: string;
  url: string;
  signedOut: boolean;
  /** The least role that may call it (route config `role`); undefined when not declared. */
  role?: string;
  /** Its request schemas as registered (what the generated-request tests derive requests from). */
  schema: { params?: unknown; querystring?: unknown; body?: unknown };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every public v1 route as registered: what the shared per-route checks iterate. */
    publicRoutes: PublicRoute[];
    /** Every /internal/ route as registered: what the session and CSRF checks iterate. */
    internalRouteList: InternalRoute[];
  }
}

export function trackRoutes(app: FastifyInstance): Map<string, Set<string>> {
  const byUrl = new Map<string, Set<string>>();
  const publicRoutes: PublicRoute[] = [];
  const internalRouteList: InternalRoute[] = [];
  app.decorate('publicRoutes', publicRoutes);
  app.decorate('internalRouteList', internalRouteList);
  app.addHook('onRoute', (route) => {
    if (route.config && (route.config as { methodNotAllowed?: boolean }).methodNotAllowed) return;
    if (route.url.startsWith('/api/v1/') && route.method !== 'HEAD') {
      for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
        publicRoutes.push({
          method,
          url: route.url,
          scopes: route.config?.scopes,
          hasBody: Boolean(route.schema?.body),
        });
      }
    }
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.url.startsWith('/internal/')) {
      const signedOut = route.config?.signedOut === true;
      const role = route.config?.role;
      for (const method of methods) {
        if (method === 'HEAD') continue;
        const { params, querystring, body } = route.schema ?? {};
        internalRouteList.push({
          method,
          url: route.url,
          signedOut,
          role,
          schema: { params, querystring, body },
        });
      }
    }
    const set = byUrl.get(route.url) ?? new Set<string>();
    for (const m of methods) set.add(m);
    byUrl.set(route.url, set);
  });
  return byUrl;
}

/** The 405 of a route `registerMethodNotAllowed` added, with its path's `Allow`. */
export function methodNotAllowed(request: FastifyRequest): ApiError {
  const allow = request.routeOptions.config.allow ?? '';
  return new ApiError('405', `${request.method} is not supported here; allowed: ${allow}`, undefined, {
    allow,
  });
}

export function registerMethodNotAllowed(app: FastifyInstance, byUrl: Map<string, Set<string>>): void {
  for (const [url, declared] of byUrl) {
    const answered =
      url.startsWith('/api/') ||
      url.startsWith('/internal/') ||
      // The reader webhook: a reader set to the wrong method is told POST, not that no such path exists.
      url.startsWith('/ingest/') ||
      url.startsWith('/openapi') ||
      HEALTH_PATHS.includes(url) ||
      url === METRICS_PATH;
    if (!answered) continue;
    const missing = ALL_METHODS.filter((m) => !declared.has(m));
    if (missing.length === 0) continue;
    const allow = COMMON_METHODS.filter((m) => declared.has(m)).join(', ');
    app.route({
      method: missing,
      url,
      config: { methodNotAllowed: true, allow },
      handler: (request, reply) => sendError(request, reply, methodNotAllowed(request)),
    });
  }
}
