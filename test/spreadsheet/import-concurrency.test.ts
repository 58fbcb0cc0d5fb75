/**
 * What an asset import holds while it runs: the keyspace lock only when the file can take
 * automatic keys, so the API's keyless creates do not queue behind an import that cannot
 * collide with them (docs/import-export.md, "Transactions").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SheetFixture, sheetFixture, uniq } from './helpers.js';

describe('asset import beside API writes', { timeout: 60_000 }, () => {
  let f: SheetFixture;
  beforeAll(async () => {
    f = await sheetFixture();
  });
  afterAll(() => f.t.close());

  /**
   * Runs an import of `csv` that first updates `held`, whose row another transaction keeps
   * locked: the import stops there, after taking whatever it takes before reading rows,
   * until `during` has answered. Returns what `during` answered within 3 s, or 'waited'.
   */
  async function whileImportWaits<T>(held: string, csv: string, during: () => Promise<T>) {
    const blocker = await f.t.database.db.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM assets WHERE org_id = $1 AND external_key = $2 FOR UPDATE', [
        f.org.id,
        held,
      ]);
      // Its failure is the result: caught at once, since it can come while COMMIT's answer
      // is awaited below, before anything else would handle it (an unhandled rejection).
      const importing = f.importCsv('assets', csv).catch((err: unknown) => err);
      // Until the import waits for the row lock (after the locks it takes first).
      for (let i = 0; i < 100; i++) {
        const { rows } = await f.t.database.db.pool.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%' AND pid <> pg_backend_pid()`,
        );
        if (rows[0].n > 0) break;
        await sleep(50);
      }
      const answer = await Promise.race([during(), sleep(3000).then(() => 'waited' as const)]);
      await blocker.query('COMMIT');
      return { answer, imported: await importing };
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      blocker.release();
    }
  }

  it('a keyless API create does not wait for an import whose keys are all its own', async () => {
    const held = uniq('HELD');
    expect((await f.api('POST', '/api/v1/assets', { external_key: held, name: 'Held' })).status).toBe(201);
    const { answer, imported } = await whileImportWaits(
      held,
      `external_key,name\n${held},Renamed\n${uniq('NEW')},New\n`,
      () => f.api('POST', '/api/v1/assets', { name: 'Keyless meanwhile' }),
    );
    expect(answer).toMatchObject({ status: 201 });
    expect(imported).toMatchObject({ applied: true, created: 1, changed: 1 });
  });

  it('an import that creates automatic keys holds the keyspace: a keyless create waits for it', async () => {
    const held = uniq('HELD');
    expect((await f.api('POST', '/api/v1/assets', { external_key: held, name: 'Held' })).status).toBe(201);
    const { answer, imported } = await whileImportWaits(
      held,
      `external_key,name\n${held},Renamed\n,Automatic\n`,
      () => f.api('POST', '/api/v1/assets', { name: 'Keyless meanwhile' }),
    );
    expect(answer).toBe('waited');
    expect(imported).toMatchObject({ applied: true, created: 1, changed: 1 });
  });

  it('an API create of a key the file creates is not held back: the import then rolls back whole as conflict', async () => {
    const held = uniq('HELD');
    const key = uniq('RACE');
    expect((await f.api('POST', '/api/v1/assets', { external_key: held, name: 'Held' })).status).toBe(201);
    const { answer, imported } = await whileImportWaits(
      held,
      `external_key,name\n${held},Renamed\n${key},Race\n`,
      () => f.api('POST', '/api/v1/assets', { external_key: key, name: 'API first' }),
    );
    expect(answer).toMatchObject({ status: 201 });
    expect(imported).toMatchObject({ type: 'conflict' });
    const stored = (await f.api('GET', `/api/v1/assets?external_key=${held}`)).json.data[0];
    expect(stored.name).toBe('Held');
  });
});
