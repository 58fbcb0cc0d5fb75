import type { FastifyRequest } from 'fastify';

/**
 * The request target as the router and every hook see it: the path, origin-form.
 *
 * HTTP/1.1 servers must accept the absolute form (`GET http://host/api/v1/orgs/me`, RFC
 * 9112 3.2.2), and a path may spell an unreserved character as a percent-escape
 * (`/%61pi/v1/...`, equivalent by RFC 3986 6.2.2.2). The router matched both, decoding as
 * it went, while the hooks that decide a request's surface (API key, rate limit, media
 * type) read the target as sent and let such a request reach a route without them.
 * Rewritten here before routing, every part of the server reads one path.
 */
export function originForm(target: string): string {
  let url = target;
  const absolute = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(url);
  if (absolute) {
    url = url.slice(absolute[0].length);
    if (!url.startsWith('/')) url = `/${url}`;
  }
  if (!url.includes('%')) return url;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  const rest = query === -1 ? '' : url.slice(query);
  return path.replace(/%([0-9A-Fa-f]{2})/g, unreserved) + rest;
}

/**
 * Whether a request is on the public API's surface: by the route it matched where there is
 * one (what the route requires does not depend on how the path was spelled), else by its
 * path (an unknown /api/ path is still rate-limited and answered in the API's way).
 */
export function onPublicApi(request: FastifyRequest): boolean {
  return (request.routeOptions.url ?? request.url).startsWith('/api/');
}

/** The bare `/openapi.json` and `/openapi.yaml`, which the spec answers 301 to their /api/ paths: public surface outside /api/. */
export function isBareDescriptionPath(path: string | undefined): boolean {
  return path === '/openapi.json' || path === '/openapi.yaml';
}

/** Whether a path (read off the wire, origin-form) is on the public surface: /api/ or a bare description path. */
export function isPublicPath(path: string): boolean {
  return path.startsWith('/api/') || isBareDescriptionPath(path);
}

/** A percent-escape of an unreserved character (ALPHA, DIGIT, `-._~`) as the character. */
function unreserved(escaped: string, hex: string): string {
  const char = String.fromCharCode(Number.parseInt(hex, 16));
  return /^[A-Za-z0-9._~-]$/.test(char) ? char : escaped;
}
