/**
 * Lock order of location writes (src/locations/repository.ts lockTree: keyspace, then tree,
 * then rows). A delete takes the tree lock, and freeing an auto key's slot takes the
 * keyspace lock (migration 0009's trigger); a create under a parent takes the keyspace lock,
 * then the tree lock. Had the delete taken them the other way round, a delete of an
 * auto-keyed location and a create under a parent would deadlock.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { BASE, type Client, client } from './helpers.js';

const TREE_LOCK_CLASS = 7110;

let t: TestApp;
let c: Client;
let holder: pg.Client;
beforeAll(async () => {
  t = await buildTestApp();
  c = await client(t);
  holder = new pg.Client({ connectionString: t.database.url });
  await holder.connect();
});
afterAll(async () => {
  await holder?.end();
  await t.close();
});

/** Backends of this database waiting for an advisory lock. */
async function waitingForLock(): Promise<number> {
  const { rows } = await holder.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database()`,
  );
  return rows[0]!.n;
}

async function untilWaiting(count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await waitingForLock()) < count) {
    if (Date.now() > deadline) throw new Error(`fewer than ${count} writes ever waited for a lock`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('a delete of an auto-keyed location and a create under a parent, queued together, both succeed', {
  timeout: 90_000,
}, async () => {
  const root = await c.create({ external_key: 'SITE', name: 'Site' });
  const doomed = await c.create({ name: 'Doomed', parent_id: root.id });
  expect(doomed.external_key).toBe('LOC-0001');

  // Both queue behind a held tree lock: the delete first, then the create.
  await holder.query('SELECT pg_advisory_lock($1, $2)', [TREE_LOCK_CLASS, c.org.id]);
  let deleted: ReturnType<Client['del']> | undefined;
  let created: ReturnType<Client['post']> | undefined;
  try {
    deleted = c.del(`${BASE}/${doomed.id}`);
    await untilWaiting(1);
    created = c.post(BASE, { name: 'New', parent_id: root.id });
    await untilWaiting(2);
  } finally {
    await holder.query('SELECT pg_advisory_unlock($1, $2)', [TREE_LOCK_CLASS, c.org.id]);
  }
  const [del, post] = await Promise.all([deleted, created]);
  expect(del!.statusCode, del!.body).toBe(204);
  expect(post!.statusCode, post!.body).toBe(201);
  // The delete went first and freed the slot the create then took.
  expect(post!.json().data.external_key).toBe('LOC-0001');
});
