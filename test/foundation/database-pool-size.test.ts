import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { defaultPoolSize, embeddedMaxConnections } from '../../src/db/pool-size.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** How many connections each pool may open (pg.Pool keeps its options). */
const sizes = (opened: Awaited<ReturnType<typeof openDatabase>>) =>
  [opened.db.pool, opened.db.appPool].map((p) => (p as unknown as { options: { max: number } }).options.max);

describe('the pools of the service (DATABASE_POOL_SIZE)', () => {
  let target: TestDatabase;
  beforeAll(async () => {
    target = await createTestDatabase();
  });
  afterAll(async () => {
    await target.drop();
  });

  it('are as large as DATABASE_POOL_SIZE says, and serve that many transactions at once', async () => {
    const opened = await openDatabase({
      DATABASE_URL: target.url,
      dataDir: '/nonexistent',
      DATABASE_POOL_SIZE: 3,
    });
    try {
      expect(sizes(opened)).toEqual([3, 3]);
      // Three transactions hold the three connections; the fourth waits for one of them.
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const backends = new Set<number>();
      const holders = [1, 2, 3].map(() =>
        opened.db.withOrg(1, async (tx) => {
          backends.add((await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
          await held;
        }),
      );
      await expect.poll(() => backends.size).toBe(3);
      let fourth = false;
      const waiting = opened.db.withOrg(1, async () => {
        fourth = true;
      });
      await new Promise((r) => setTimeout(r, 100));
      expect(fourth).toBe(false);
      release();
      await Promise.all([...holders, waiting]);
      expect(fourth).toBe(true);
    } finally {
      await opened.close();
    }
  });

  it("default to this machine's cores when it is not set", async () => {
    const opened = await openDatabase({ DATABASE_URL: target.url, dataDir: '/nonexistent' });
    try {
      expect(sizes(opened)).toEqual([defaultPoolSize(), defaultPoolSize()]);
    } finally {
      await opened.close();
    }
  });

  it('the embedded server started for them takes both pools at once, with room to spare', {
    timeout: 120_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tagtrail-pool-size-'));
    try {
      const opened = await openDatabase({ dataDir: dir, DATABASE_POOL_SIZE: 100 }, { migrate: false });
      try {
        expect(sizes(opened)).toEqual([100, 100]);
        const shown = await opened.db.pool.query<{ max_connections: string }>('SHOW max_connections');
        expect(Number(shown.rows[0]!.max_connections)).toBe(embeddedMaxConnections(100));
        expect(embeddedMaxConnections(100)).toBeGreaterThanOrEqual(2 * 100 + 10);
      } finally {
        await opened.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
