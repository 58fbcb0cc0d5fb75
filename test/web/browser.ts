import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
// CI installs Chromium first (.ci/run); there a missing browser is a failure, never a skip.
if (!hasChromium && process.env.CI) {
  throw new Error(`${CHROMIUM} is missing on CI: the browser suite must run (apt-get install chromium)`);
}

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const SCREENSHOTS = join(ROOT, 'test-results', 'screenshots');

/**
 * Compiles web/src to dist/web (what `npm run build` does for the web app). Every browser
 * suite calls this, two at a time, while the other's service serves dist/web to its
 * browser: tsc rewrites each file in place, so a page could load a module half written
 * ("does not provide an export named …"). The build goes to a directory of its own and
 * each file is then renamed into place, which replaces it whole.
 */
export async function buildWeb(): Promise<void> {
  const target = join(ROOT, 'dist/web');
  await mkdir(join(ROOT, 'dist'), { recursive: true });
  const scratch = await mkdtemp(join(ROOT, 'dist/.web-build-'));
  try {
    await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(ROOT, 'web/tsconfig.json'),
        '--outDir',
        scratch,
      ],
      { cwd: ROOT },
    );
    for (const file of await readdir(scratch, { recursive: true })) {
      const from = join(scratch, file);
      if (!(await stat(from)).isFile()) continue;
      await mkdir(dirname(join(target, file)), { recursive: true });
      await rename(from, join(target, file));
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Requests that left the service under test (there must be none). */
  foreignRequests: string[];
  /** Console errors and uncaught page errors, except the expected ones. */
  consoleErrors: string[];
  /** Saves test-results/screenshots/<name>.png: the whole page, or what the screen shows. */
  screenshot(name: string, page?: Page, options?: { fullPage?: boolean }): Promise<void>;
  close(): Promise<void>;
}

/**
 * Debian's Chromium driven by playwright-core, headless, with a fresh profile and nothing
 * that phones home. `expectedFailures` are URL path suffixes whose 4xx answers the app
 * expects (the signed-out session probe): the browser logs those as console errors.
 */
export async function launch(baseUrl: string, expectedFailures: string[]): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'tagtrail-chromium-'));
  await mkdir(SCREENSHOTS, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
    viewport: { width: 1280, height: 800 },
    locale: 'en-US',
    timezoneId: 'UTC',
    permissions: ['clipboard-read', 'clipboard-write'],
    // A site served over HTTPS in a test has a self-signed certificate made for it.
    ignoreHTTPSErrors: baseUrl.startsWith('https:'),
  });
  // A bound on waiting for a state that must come, not a speed target: CI runs the suites
  // two at a time beside the database servers on two cores, where a first page load has
  // been seen to take most of 10 s.
  context.setDefaultTimeout(20_000);
  const origin = new URL(baseUrl).origin;
  const foreignRequests: string[] = [];
  const consoleErrors: string[] = [];
  context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:')) foreignRequests.push(url);
  });
  const watch = (page: Page) => {
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const where = message.location().url ?? '';
      const path = where.startsWith(origin) ? new URL(where).pathname : where;
      const expected =
        message.text().startsWith('Failed to load resource') &&
        expectedFailures.some((p) => path.endsWith(p));
      if (!expected) consoleErrors.push(`${message.text()} (${where})`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`uncaught: ${error.message}`));
  };
  // TAGTRAIL_TEST_CPU_THROTTLE=N runs every page's scripts N times slower (Chromium's CPU
  // throttling: the renderer pauses, it burns no CPU), as on a loaded CI machine: the way
  // to shake out a test that reads the page before its data has rendered.
  const throttle = Number(process.env.TAGTRAIL_TEST_CPU_THROTTLE ?? '1');
  const slowDown = async (page: Page) => {
    if (!(throttle > 1)) return;
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
  };
  // TAGTRAIL_TEST_API_DELAY_MS=N holds every /internal/ request N ms before it leaves the
  // browser, as a slow service or network would: the page's heading renders at once, its
  // data N ms later, so a test that reads the data without waiting for it fails every time.
  // TAGTRAIL_TEST_API_JITTER_MS=N adds a random 0..N ms on top, per request, so answers come
  // back in another order than asked (a page's second fetch finishing before its first, a
  // re-render landing between a click and its answer), as on a busy machine.
  const apiDelay = Number(process.env.TAGTRAIL_TEST_API_DELAY_MS ?? '0');
  const apiJitter = Number(process.env.TAGTRAIL_TEST_API_JITTER_MS ?? '0');
  if (apiDelay > 0 || apiJitter > 0) {
    await context.route(`${origin}/internal/**`, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, apiDelay + Math.random() * apiJitter));
      await route.continue().catch(() => undefined);
    });
  }
  context.on('page', (page) => {
    watch(page);
    void slowDown(page).catch(() => undefined);
  });
  const first = context.pages()[0];
  if (first) watch(first);
  const page = first ?? (await context.newPage());
  await slowDown(page);
  return {
    context,
    page,
    foreignRequests,
    consoleErrors,
    async screenshot(name, target = page, { fullPage = true } = {}) {
      // From the top, so sticky parts sit where a person first sees them.
      await target.evaluate('window.scrollTo(0, 0)');
      await target.screenshot({
        path: join(SCREENSHOTS, `${name}.png`),
        fullPage,
        animations: 'disabled',
      });
    },
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
