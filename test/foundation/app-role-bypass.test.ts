/**
 * The start refuses a request role that row-level security would let through: a superuser,
 * a role with BYPASSRLS, a table's owner or a member of the owner's role. On a server of
 * the test's own, since the role is shared by every database of a server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { query } from '../helpers/pg-query.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';

let server: PrivatePostgres;

beforeAll(async () => {
  server = await startPrivatePostgres();
  await query(server.urlFor('postgres'), 'CREATE DATABASE site');
}, 180_000);
afterAll(async () => {
  await server?.destroy();
});

const open = () =>
  openDatabase({ DATABASE_URL: server.urlFor('site'), dataDir: '/nonexistent', DATABASE_POOL_SIZE: 2 });
const admin = (sql: string) => query(server.urlFor('site'), sql);

describe('a request role that row-level security would not apply to', () => {
  it('opens the database while the role is restricted', async () => {
    await (await open()).close();
  }, 120_000);

  it.each([
    [
      'a superuser',
      'ALTER ROLE tagtrail_app SUPERUSER',
      'ALTER ROLE tagtrail_app NOSUPERUSER',
      /is a superuser/,
    ],
    [
      'with BYPASSRLS',
      'ALTER ROLE tagtrail_app BYPASSRLS',
      'ALTER ROLE tagtrail_app NOBYPASSRLS',
      /has BYPASSRLS/,
    ],
    [
      'the owner of a table',
      'ALTER TABLE stays OWNER TO tagtrail_app',
      'ALTER TABLE stays OWNER TO postgres',
      /owns the table stays/,
    ],
    [
      "a member of the tables' owner's role",
      'GRANT postgres TO tagtrail_app',
      'REVOKE postgres FROM tagtrail_app',
      /owns the table \w+, or is a member of its owner's role/,
    ],
  ])(
    'stops the start when it is %s',
    async (_what, grant, undo, message) => {
      await admin(grant);
      try {
        await expect(open()).rejects.toThrow(message);
        await expect(open()).rejects.toThrow(/row-level security would not apply to it/);
      } finally {
        await admin(undo);
      }
      await (await open()).close();
    },
    120_000,
  );
});
