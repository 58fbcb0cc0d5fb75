import type { Server as HttpServer, ServerOptions as HttpServerOptions } from 'node:http';
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import type { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import type { TlsPair } from '../tls/tls-files.js';

/** A year: browsers that saw the service over HTTPS keep to HTTPS for it that long. */
const HSTS = 'max-age=31536000';

/**
 * Fastify's `https` option for serving TLS on the API's port. Fastify hands the `http`
 * option to plain servers only, so the connection bounds go in here too; a client that
 * opens a connection and never finishes the handshake is cut off as one that never sends
 * its headers would be.
 */
export function httpsOptions(
  tls: TlsPair,
  http: HttpServerOptions | null | undefined,
  headersTimeoutMs: number,
): HttpsServerOptions {
  return { ...http, cert: tls.cert, key: tls.key, handshakeTimeout: headersTimeoutMs };
}

/**
 * Strict-Transport-Security on every answer of a server that serves TLS itself (registered
 * only then: every request it gets came over TLS; behind a proxy that ends TLS the header is
 * the proxy's to give): a browser that once reached the web app over HTTPS does not send
 * its session cookie in clear later.
 */
export function registerStrictTransportSecurity(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('strict-transport-security', HSTS);
    done();
  });
}

/** Serves `pair` to the connections that open from now on; open ones keep their certificate. */
export function replaceCertificate(server: HttpServer, pair: TlsPair): void {
  (server as unknown as TlsServer).setSecureContext({ cert: pair.cert, key: pair.key });
}
