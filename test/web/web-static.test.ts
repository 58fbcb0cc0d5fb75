import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandler } from '../../src/http/error-handler.js';
import { isClientRoute, webAppRoutes } from '../../src/http/web-static.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * How the service serves the web app (docs/web-app.md "Served paths"): index.html for the
 * client's routes with a CSP that admits exactly the inline import map, the app's files
 * under a content-hashed path, Preact's modules, and the server's own 404 for every path
 * that is not the client's.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const importMapOf = (html: string) => /<script type="importmap">([^<]*)<\/script>/.exec(html)?.[1];

describe('index.html and the client routes (the real server)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    '/',
    '/sign-in',
    '/sign-in?next=%2Fkeys',
    '/locations',
    '/assets',
    '/assets?q=pallet',
    '/history/42',
    '/assets/42',
    '/assets/new',
    '/assets/2147483647?tab=history',
    '/keys',
    '/unknown-page',
  ])('GET %s answers index.html with the security headers', async (url) => {
    const res = await t.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('same-origin');
    // Not framable (clickjacking), for browsers with and without CSP frame-ancestors.
    expect(res.headers['x-frame-options']).toBe('DENY');
    const map = importMapOf(res.body);
    expect(map).toBeDefined();
    const hash = createHash('sha256').update(map!, 'utf8').digest('base64');
    const csp = String(res.headers['content-security-policy']);
    expect(csp.split('; ')).toEqual(
      expect.arrayContaining([
        "default-src 'self'",
        `script-src 'self' 'sha256-${hash}'`,
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
      ]),
    );
    expect(res.body).toMatch(/<script type="module" src="\/assets\/[0-9a-f]{12}\/main\.js"><\/script>/);
    const sheets = [...res.body.matchAll(/<link rel="stylesheet" href="([^"]+)" \/>/g)].map((m) => m[1]);
    expect(sheets).toHaveLength(5);
    for (const sheet of sheets) {
      expect(sheet).toMatch(/^\/assets\/[0-9a-f]{12}\/styles\/[1-5]-[a-z-]+\.css$/);
      const css = await t.app.inject({ method: 'GET', url: sheet });
      expect(css.statusCode, sheet).toBe(200);
      expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    }
    expect(res.body).not.toMatch(/https?:\/\//);
  });

  it('every /internal/ answer names the build index.html loads, errors too; the public API and health do not', async () => {
    const index = await t.app.inject({ method: 'GET', url: '/' });
    const build = /src="\/assets\/([0-9a-f]{12})\/main\.js"/.exec(index.body)?.[1];
    expect(build).toBeDefined();
    for (const url of ['/internal/session', '/internal/auth/sign-up-state', '/internal/no-such-route']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.headers['x-tagtrail-web-build'], url).toBe(build);
    }
    for (const url of ['/api/v1/assets', '/healthz', '/']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.headers['x-tagtrail-web-build'], url).toBeUndefined();
    }
  });

  it('HEAD of a client route has the headers and no body', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/readers' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toBe('');
  });

  it('the import map names Preact, its hooks and its JSX runtime, all served here', async () => {
    const index = await t.app.inject({ method: 'GET', url: '/' });
    const { imports } = JSON.parse(importMapOf(index.body)!) as { imports: Record<string, string> };
    expect(Object.keys(imports).sort()).toEqual(['preact', 'preact/hooks', 'preact/jsx-runtime']);
    for (const url of Object.values(imports)) {
      expect(url).toMatch(/^\/assets\/vendor\/preact@\d+\.\d+\.\d+\/[a-zA-Z]+\.mjs$/);
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.body).toMatch(/export\s*\{/);
    }
  });

  it.each([
    ['GET', '/api/v1/nope'],
    ['GET', '/api/v1/'],
    ['GET', '/api'],
    ['GET', '/internal/nope'],
    ['GET', '/internal'],
    ['GET', '/ingest/nope'],
    ['GET', '/assets/nope'],
    ['GET', '/assets/0'],
    ['GET', '/assets/42/history'],
    ['GET', '/assets/42.js'],
    ['GET', '/assets/vendor/preact@0.0.0/preact.mjs'],
    ['GET', '/favicon.ico'],
    ['GET', '/robots.txt'],
    ['GET', '/locations/deeper'],
    ['POST', '/'],
    ['DELETE', '/keys'],
  ])('%s %s is the server 404, not the app', async (method, url) => {
    const res = await t.app.inject({ method: method as 'GET', url });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json().error.type).toBe('not_found');
  });

  // A browser's page load of such an address showed the JSON envelope, raw, as the page.
  it.each([
    ['/assets/abc', { 'sec-fetch-mode': 'navigate', accept: 'text/html,*/*;q=0.8' }],
    ['/locations/deeper', { 'sec-fetch-mode': 'navigate' }],
    ['/favicon.ico', { 'sec-fetch-mode': 'navigate' }],
    // A browser that sends no Sec-Fetch headers: its Accept asks for HTML first.
    ['/assets/42/history', { accept: 'text/html,application/xhtml+xml' }],
  ])(
    'a page load of %s gets the app with status 404, which says the page is not found',
    async (url, headers) => {
      const res = await t.app.inject({ method: 'GET', url, headers });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(String(res.headers['content-security-policy']).split('; ')).toContain("frame-ancestors 'none'");
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(importMapOf(res.body)).toBeDefined();
    },
  );

  it.each([
    // The API surfaces answer JSON to a page load too.
    ['/api/v1/nope', { 'sec-fetch-mode': 'navigate', accept: 'text/html' }],
    ['/internal/nope', { 'sec-fetch-mode': 'navigate', accept: 'text/html' }],
    ['/ingest/nope', { accept: 'text/html' }],
    // A module, a stylesheet or an image the page asked for is no page load.
    ['/assets/000000000000/nope.js', { 'sec-fetch-mode': 'cors', accept: 'text/html' }],
    ['/favicon.ico', { 'sec-fetch-mode': 'no-cors', accept: 'image/avif,image/webp,*/*' }],
  ])('%s stays the JSON 404 for anything but a page load', async (url, headers) => {
    const res = await t.app.inject({ method: 'GET', url, headers });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json().error.type).toBe('not_found');
  });

  it('isClientRoute keeps the server prefixes', () => {
    expect(isClientRoute('/assets')).toBe(true);
    expect(isClientRoute('/keys')).toBe(true);
    expect(isClientRoute('/assets/7')).toBe(true);
    expect(isClientRoute('/assets/new')).toBe(true);
    for (const path of [
      '/api',
      '/api/x',
      '/internal',
      '/internal/x',
      '/ingest',
      '/ingest/x',
      '/assets/x',
      '/a.js',
    ]) {
      expect(isClientRoute(path), path).toBe(false);
    }
  });
});

describe('the app files (a built web app)', () => {
  let dist: string;
  let app: FastifyInstance;
  let build: string;

  beforeAll(async () => {
    dist = await mkdtemp(join(tmpdir(), 'tagtrail-web-dist-'));
    await mkdir(join(dist, 'pages'));
    await writeFile(join(dist, 'main.js'), "import './pages/home.js';\n");
    await writeFile(join(dist, 'main.js.map'), '{}');
    await writeFile(join(dist, 'pages', 'home.js'), 'export const home = 1;\n');
    app = Fastify();
    registerErrorHandler(app, 1024);
    await app.register(webAppRoutes({ root: ROOT, distDir: dist }));
    await app.ready();
    const index = await app.inject({ method: 'GET', url: '/' });
    build = /\/assets\/([0-9a-f]{12})\/main\.js/.exec(index.body)![1]!;
  });
  afterAll(async () => {
    await app.close();
    await rm(dist, { recursive: true, force: true });
  });

  it.each([
    ['main.js', 'text/javascript; charset=utf-8'],
    ['pages/home.js', 'text/javascript; charset=utf-8'],
    ['styles/1-base.css', 'text/css; charset=utf-8'],
    ['favicon.svg', 'image/svg+xml'],
  ])('serves %s with its type, an ETag and a year of caching', async (file, type) => {
    const url = `/assets/${build}/${file}`;
    const res = await app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const etag = String(res.headers.etag);
    const again = await app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('a new build gets a new path', async () => {
    await writeFile(join(dist, 'main.js'), "import './pages/home.js';\nconsole.log(2);\n");
    const other = Fastify();
    registerErrorHandler(other, 1024);
    await other.register(webAppRoutes({ root: ROOT, distDir: dist }));
    const index = await other.inject({ method: 'GET', url: '/' });
    expect(index.body).toMatch(/\/assets\/[0-9a-f]{12}\/main\.js/);
    expect(index.body).not.toContain(`/assets/${build}/`);
    // A page of the old build still gets the current files, uncached.
    const old = await other.inject({ method: 'GET', url: `/assets/${build}/pages/home.js` });
    expect(old.statusCode).toBe(200);
    expect(old.headers['cache-control']).toBe('no-cache');
    await other.close();
  });

  it.each(['main.js.map', 'index.html', 'nope.js', '../package.json', '%2e%2e/package.json'])(
    'does not serve %s',
    async (file) => {
      const res = await app.inject({ method: 'GET', url: `/assets/${build}/${file}` });
      expect(res.statusCode).toBe(404);
    },
  );
});
