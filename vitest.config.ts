import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll gives up after 1 s by default: a save and a reload in a browser on a
    // loaded machine can take longer. The same bound as Playwright's waits (browser.ts).
    expect: { poll: { timeout: 20_000 } },
    // Two cores: more workers only contend for the same database server.
    maxWorkers: 2,
  },
});
