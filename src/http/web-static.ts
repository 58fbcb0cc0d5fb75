import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { sendError } from './error-handler.js';

/**
 * The web application (docs/web-app.md): `index.html` for `/` and every client route,
 * and `/assets/**` for the compiled modules (dist/web), the CSS and icons (web/public)
 * and Preact's own ES modules (the import map points there). Everything is read once at
 * start and served from memory: a few dozen kilobytes, no file-system path ever built
 * from a request.
 *
 * App files live under `/assets/<build>/`, where <build> hashes their contents; relative
 * imports between modules keep that prefix, so every file can be cached for a year and
 * a new build is fetched as a whole. Vendor files live under their package version.
 */

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** Path prefixes that belong to the server, never to the client router. */
const SERVER_PREFIXES = ['/api/', '/internal/', '/ingest/', '/assets/'];

const IMMUTABLE = 'public, max-age=31536000, immutable';

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export interface WebAppOptions {
  /** The project directory (holding package.json, web/ and dist/web); found from this file by default. */
  root?: string;
  /** The compiled modules; `<root>/dist/web` by default. */
  distDir?: string;
  /** The web app as loadWebApp made it, instead of loading it from the options above. */
  web?: WebApp;
}

/** The response header naming the web app's build, on every /internal/ answer. */
export const WEB_BUILD_HEADER = 'x-tagtrail-web-build';

/**
 * A page opened before an upgrade keeps running the old web app against the new service;
 * every /internal/ answer names the build the service serves now, so the page can offer to
 * reload once it differs from its own (web/src/build.ts). On the root instance, before
 * the routes, so it reaches every /internal/ route.
 */
export function registerWebBuildHeader(app: FastifyInstance, build: string): void {
  // Set on arrival, so error answers carry it too; synchronous, as every request passes here.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.url.startsWith('/internal/')) reply.header(WEB_BUILD_HEADER, build);
    done();
  });
}

export interface WebApp {
  build: string;
  indexHtml: string;
  csp: string;
  /** False when dist/web has no main.js (the web build has not run). */
  built: boolean;
  assets: Map<string, Asset>;
}

function findRoot(from: string): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'web'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`web app: no project directory above ${from}`);
    dir = up;
  }
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...walk(path));
    else out.push(path);
  }
  return out;
}

const asset = (body: Buffer, path: string): Asset => ({
  body,
  type: TYPES[extname(path)] ?? 'application/octet-stream',
  etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
});

/** Loads and prepares everything the web app serves. */
export function loadWebApp(options: WebAppOptions = {}): WebApp {
  const root = options.root ?? findRoot(dirname(fileURLToPath(import.meta.url)));
  const distDir = options.distDir ?? join(root, 'dist', 'web');
  const publicDir = join(root, 'web', 'public');

  // App files: compiled modules first, then the public files beside them. No source maps
  // and no index.html template among them.
  const files = new Map<string, Buffer>();
  for (const [dir, accept] of [
    [distDir, (p: string) => p.endsWith('.js')],
    [publicDir, (p: string) => !p.endsWith('index.html') && extname(p) in TYPES],
  ] as const) {
    for (const path of walk(dir)) {
      const name = relative(dir, path).split(sep).join('/');
      if (accept(name) && !files.has(name)) files.set(name, readFileSync(path));
    }
  }
  const hash = createHash('sha256');
  for (const [name, body] of files) hash.update(name).update('\0').update(body).update('\0');
  const build = hash.digest('hex').slice(0, 12);

  const assets = new Map<string, Asset>();
  for (const [name, body] of files) assets.set(`/assets/${build}/${name}`, asset(body, name));

  // Preact's ES modules, as its package exports them.
  const require = createRequire(join(root, 'package.json'));
  const preactDir = dirname(require.resolve('preact/package.json'));
  const preactVersion = (
    JSON.parse(readFileSync(join(preactDir, 'package.json'), 'utf8')) as { version: string }
  ).version;
  const vendorBase = `/assets/vendor/preact@${preactVersion}`;
  const imports: Record<string, string> = {};
  for (const [specifier, file] of [
    ['preact', 'dist/preact.mjs'],
    ['preact/hooks', 'hooks/dist/hooks.mjs'],
    ['preact/jsx-runtime', 'jsx-runtime/dist/jsxRuntime.mjs'],
  ] as const) {
    const url = `${vendorBase}/${file.split('/').pop()}`;
    imports[specifier] = url;
    assets.set(url, asset(readFileSync(join(preactDir, file)), file));
    // The modules name their source maps; serve them so browser tools find them (public code).
    const map = join(preactDir, `${file}.map`);
    if (existsSync(map)) assets.set(`${url}.map`, asset(readFileSync(map), `${file}.map`));
  }

  const importMap = JSON.stringify({ imports });
  const scriptHash = createHash('sha256').update(importMap, 'utf8').digest('base64');
  const template = readFileSync(join(publicDir, 'index.html'), 'utf8');
  // The template's import map is a placeholder: the real one, and its hash, are made here.
  const placeholder = /<script type="importmap">[^<]*<\/script>/;
  if (!placeholder.test(template)) throw new Error('web/public/index.html has no <script type="importmap">');
  const indexHtml = template
    .replaceAll('{{ASSETS}}', `/assets/${build}`)
    .replace(placeholder, () => `<script type="importmap">${importMap}</script>`);
  const csp = [
    "default-src 'self'",
    `script-src 'self' 'sha256-${scriptHash}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { build, indexHtml, csp, built: files.has('main.js'), assets };
}

function securityHeaders(reply: FastifyReply, csp: string): void {
  reply.header('content-security-policy', csp);
  // No page may be framed (clickjacking): the CSP's frame-ancestors 'none' says so to current
  // browsers, X-Frame-Options to those that ignore frame-ancestors.
  reply.header('x-frame-options', 'DENY');
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'same-origin');
}

/** The surfaces whose every answer is JSON, to a browser's address bar too. */
const JSON_SURFACES = ['/api/', '/internal/', '/ingest/'];

/**
 * A browser loading a page (an address typed, a link followed, a reload), not a fetch, a
 * module or an image: `Sec-Fetch-Mode: navigate` where the browser sends it, else an Accept
 * that asks for HTML first.
 */
function isPageLoad(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const path = request.url.split('?')[0]!;
  if (JSON_SURFACES.some((p) => path.startsWith(p) || path === p.slice(0, -1))) return false;
  const mode = request.headers['sec-fetch-mode'];
  if (mode !== undefined) return mode === 'navigate';
  return /^\s*text\/html/i.test(request.headers.accept ?? '');
}

/**
 * A page load of an address that is no page (`/assets/abc`, `/locations/5`, a mistyped
 * link) gets the app with status 404, which says "Page not found" (or "Asset not found")
 * with the navigation around it: it got the API's JSON error envelope, raw, in the browser
 * window. Anything else keeps the JSON 404. Returns whether it answered.
 */
export function notFoundPage(web: WebApp): (request: FastifyRequest, reply: FastifyReply) => boolean {
  const index = Buffer.from(web.indexHtml, 'utf8');
  return (request, reply) => {
    if (!isPageLoad(request)) return false;
    sendIndex(reply.code(404), web, index);
    return true;
  };
}

/** The app's one page (index.html), from which the browser routes. */
function sendIndex(reply: FastifyReply, web: WebApp, index: Buffer): FastifyReply {
  securityHeaders(reply, web.csp);
  return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index);
}

const notFound = (request: FastifyRequest, reply: FastifyReply) =>
  sendError(
    request,
    reply,
    new ApiError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}`),
  );

/**
 * The client's asset pages (`/assets/new`, `/assets/{id}`): one segment under `/assets/`,
 * where no file ever is (the app's files sit under the build hash, Preact's under vendor/).
 */
const ASSET_PAGE = /^\/assets\/(?:new|[1-9][0-9]{0,9})$/;

/**
 * A path the client router may own: not the server's, and not a file name. (`/assets`
 * itself is the client's asset list, and `/assets/{id}` an asset's page; the rest of
 * `/assets/…` is the server's.)
 */
export function isClientRoute(path: string): boolean {
  if (ASSET_PAGE.test(path)) return true;
  if (SERVER_PREFIXES.some((p) => path.startsWith(p) || (path === p.slice(0, -1) && p !== '/assets/'))) {
    return false;
  }
  const last = path.slice(path.lastIndexOf('/') + 1);
  return !last.includes('.');
}

export function webAppRoutes(options: WebAppOptions = {}): FastifyPluginAsync {
  return async (app) => {
    const web = options.web ?? loadWebApp(options);
    if (!web.built) app.log.warn('web app: dist/web/main.js is missing; run `npm run build`');
    const index = Buffer.from(web.indexHtml, 'utf8');
    const pageNotFound = notFoundPage(web);
    const missing = (request: FastifyRequest, reply: FastifyReply) =>
      pageNotFound(request, reply) ? reply : notFound(request, reply);

    const page = (request: FastifyRequest, reply: FastifyReply) => {
      if (!isClientRoute(request.url.split('?')[0]!)) return missing(request, reply);
      return sendIndex(reply, web, index);
    };

    app.get('/assets/*', (request, reply) => {
      const path = request.url.split('?')[0]!;
      if (ASSET_PAGE.test(path)) return page(request, reply);
      let found = web.assets.get(path);
      let cache = IMMUTABLE;
      if (!found) {
        // A page loaded before a new build asks for its old build: answer with the
        // current file of that name, uncached.
        const old = /^\/assets\/([0-9a-f]{12})\/(.+)$/.exec(path);
        if (old && old[1] !== web.build) {
          found = web.assets.get(`/assets/${web.build}/${old[2]}`);
          cache = 'no-cache';
        }
      }
      if (!found) return missing(request, reply);
      securityHeaders(reply, web.csp);
      reply.header('cache-control', cache).header('etag', found.etag).type(found.type);
      if (request.headers['if-none-match'] === found.etag) return reply.code(304).send();
      return reply.send(found.body);
    });

    // The client's routes: one path segment (`/locations`, `/keys`, an unknown page the
    // client answers itself), an asset's page (above) and an asset's history (the old
    // address of its page). Deeper paths stay the server's, so
    // an unknown `/internal/…` or `/ingest/…` path is still a plain 404 of its own surface.
    app.get('/', page);
    app.get('/:page', page);
    app.get('/history/:asset_id', page);
  };
}
