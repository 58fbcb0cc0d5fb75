import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { connectInTurn, READ_PLACE_KEPT_MS } from '../../src/db/write-first.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('connections go to waiting writes before waiting reads', () => {
  let target: TestDatabase;
  beforeAll(async () => {
    target = await createTestDatabase({ migrate: false });
  });
  afterAll(async () => {
    await target.drop();
  });

  /** One connection, held; then `waiters` queue in the order given and are served in turn. */
  async function servedOrder(
    waiters: Array<{ name: string; write: boolean; waitBefore?: number }>,
  ): Promise<string[]> {
    const pool = new pg.Pool({ connectionString: target.url, max: 1 });
    try {
      const holder = await pool.connect();
      const order: string[] = [];
      const served: Array<Promise<void>> = [];
      for (const w of waiters) {
        if (w.waitBefore) await sleep(w.waitBefore);
        served.push(
          connectInTurn(pool, () => pool.connect(), w.write).then((client) => {
            order.push(w.name);
            client.release();
          }),
        );
      }
      holder.release();
      await Promise.all(served);
      return order;
    } finally {
      await pool.end();
    }
  }

  it('serves a write ahead of the reads that queued before it, and writes among themselves in order', async () => {
    expect(
      await servedOrder([
        { name: 'read 1', write: false },
        { name: 'read 2', write: false },
        { name: 'write 1', write: true },
        { name: 'read 3', write: false },
        { name: 'write 2', write: true },
      ]),
    ).toEqual(['write 1', 'write 2', 'read 1', 'read 2', 'read 3']);
  });

  it(`keeps the place of a read that has waited ${READ_PLACE_KEPT_MS} ms, so writes cannot starve reads`, async () => {
    expect(
      await servedOrder([
        { name: 'read 1', write: false },
        { name: 'read 2', write: false },
        { name: 'write 1', write: true, waitBefore: READ_PLACE_KEPT_MS + 50 },
        { name: 'read 3', write: false },
        { name: 'write 2', write: true },
      ]),
    ).toEqual(['read 1', 'read 2', 'write 1', 'write 2', 'read 3']);
  });

  it("keeps pg-pool's connection timeout for a write moved ahead, and for the reads behind it", async () => {
    const pool = new pg.Pool({ connectionString: target.url, max: 1, connectionTimeoutMillis: 300 });
    try {
      const holder = await pool.connect();
      const read = connectInTurn(pool, () => pool.connect(), false);
      const write = connectInTurn(pool, () => pool.connect(), true);
      const [w, r] = await Promise.allSettled([write, read]);
      for (const outcome of [w, r]) {
        expect(outcome.status).toBe('rejected');
        expect(String((outcome as PromiseRejectedResult).reason)).toContain(
          'timeout exceeded when trying to connect',
        );
      }
      expect(pool.waitingCount).toBe(0);
      holder.release();
      // Nothing was left behind in the queue: the connection serves the next caller at once.
      const next = await connectInTurn(pool, () => pool.connect(), true);
      expect((await next.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
      next.release();
    } finally {
      await pool.end();
    }
  });

  it('through the service: a write transaction overtakes queued reads', async () => {
    const opened = await openDatabase({
      DATABASE_URL: target.url,
      dataDir: '/nonexistent',
      DATABASE_POOL_SIZE: 2,
    });
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const holders = [1, 2].map(() => opened.db.withOrg(1, () => held));
      await expect.poll(() => opened.db.appPool.totalCount - opened.db.appPool.idleCount).toBe(2);
      const order: string[] = [];
      const reads = [1, 2, 3].map((i) =>
        opened.db.readWithOrg(1, async () => {
          order.push(`read ${i}`);
        }),
      );
      const write = opened.db.withOrg(1, async () => {
        order.push('write');
      });
      await sleep(20);
      release();
      await Promise.all([...holders, ...reads, write]);
      expect(order[0]).toBe('write');
      expect(order.slice(1).sort()).toEqual(['read 1', 'read 2', 'read 3']);
    } finally {
      await opened.close();
    }
  });
});
