import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import { untilSessions } from '../helpers/database.js';

/**
 * A delete that frees an auto-key slot and a create that assigns one must serialise:
 * a create that ran while the delete was uncommitted used to see the slot taken, raise
 * the watermark past it, and the slot was never handed out again.
 */
describe('auto keys with a delete in flight', () => {
  let t: TestApp;
  let token: string;
  let orgId: number;
  beforeAll(async () => {
    t = await buildTestApp();
    const org = await t.createOrg();
    orgId = org.id;
    token = (await org.key()).token;
  });
  afterAll(() => t.close());

  const create = () =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/assets',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: { name: 'Crate' },
    });

  it('a create during an uncommitted delete waits and then takes the freed slot', async () => {
    for (let i = 0; i < 5; i++) expect((await create()).statusCode).toBe(201);
    const client = await t.database.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        "UPDATE assets SET deleted_at = now() WHERE org_id = $1 AND external_key = 'ASSET-0002'",
        [orgId],
      );
      const pending = create();
      await untilSessions(t.database.db, "wait_event_type = 'Lock'", 'the create waiting for the delete');
      await client.query('COMMIT');
      expect((await pending).json().data.external_key).toBe('ASSET-0002');
    } finally {
      client.release();
    }
    expect((await create()).json().data.external_key).toBe('ASSET-0006');
  });
});
