/**
 * A transaction whose statements are pipelined fails with what aborted it, not with the
 * "current transaction is aborted" (25P02) of a statement sent behind it, whichever of the
 * two the work awaited (src/db/first-failure.ts): so a deadlock behind a 25P02 is still run
 * again (src/db/transient-conflict.ts), and a failure is reported as what it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let orgId: number;
beforeAll(async () => {
  t = await buildTestApp();
  orgId = (await t.createOrg()).id;
});
afterAll(() => t?.close());

/** A statement that fails with SQLSTATE `code`. */
const failing = (code: string) =>
  `DO $$ BEGIN RAISE EXCEPTION 'raised by the test' USING ERRCODE = '${code}'; END $$`;

describe('the failure of a pipelined transaction', () => {
  it('is the statement that aborted it, when the work awaited one sent behind it', async () => {
    await expect(
      t.database.db.withOrg(orgId, async (tx) => {
        tx.query(failing('22012')).catch(() => undefined);
        await tx.query('SELECT 1');
      }),
    ).rejects.toMatchObject({ code: '22012' });
  });

  it('is a deadlock run again even when a statement behind it was awaited', async () => {
    const retried = t.database.db.stats.transientConflictRetries;
    let attempts = 0;
    const answer = await t.database.db.withOrg(orgId, async (tx) => {
      attempts++;
      if (attempts === 1) tx.query(failing('40P01')).catch(() => undefined);
      const { rows } = await tx.query<{ n: number }>('SELECT 41 + 1 AS n');
      return rows[0]!.n;
    });
    expect(answer).toBe(42);
    expect(attempts).toBe(2);
    expect(t.database.db.stats.transientConflictRetries).toBe(retried + 1);
  });

  it('leaves the connection as it was: the next transactions run as usual', async () => {
    for (let i = 0; i < 3; i++) {
      const { rows } = await t.database.db.withOrg(orgId, (tx) =>
        tx.query<{ n: number }>('SELECT $1::int AS n', [i]),
      );
      expect(rows).toEqual([{ n: i }]);
    }
  });
});
