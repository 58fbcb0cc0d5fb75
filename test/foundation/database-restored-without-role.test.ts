/**
 * A DATABASE_URL database restored with pg_dump/pg_restore on a server without the role
 * `tagtrail_app` (a cluster object pg_dump leaves out): the start refuses, saying how to
 * restore it, instead of serving /readyz 200 and answering every request 500. On a server
 * of the test's own, since the role is shared by every database of a server.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { query } from '../helpers/pg-query.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';

let server: PrivatePostgres;

beforeAll(async () => {
  server = await startPrivatePostgres();
  await query(server.urlFor('postgres'), 'CREATE DATABASE restored');
}, 180_000);
afterAll(async () => {
  await server?.destroy();
});

const open = () =>
  openDatabase({ DATABASE_URL: server.urlFor('restored'), dataDir: '/nonexistent', DATABASE_POOL_SIZE: 2 });

describe('a database restored without the role its connections take', () => {
  it('stops the start, saying to create the role and restore again', async () => {
    const migrated = await open();
    await migrated.close();
    // What a dump restored on a new server leaves: the role gone, and with it every grant.
    await query(server.urlFor('restored'), 'DROP OWNED BY tagtrail_app');
    await query(server.urlFor('postgres'), 'DROP OWNED BY tagtrail_app');
    await query(server.urlFor('postgres'), 'DROP ROLE tagtrail_app');
    await expect(open()).rejects.toThrow(
      "the role tagtrail_app, which the service's connections take, does not exist on this PostgreSQL server: " +
        'a database restored from pg_dump on a server without it lost every privilege granted to it. ' +
        'Create it first (CREATE ROLE tagtrail_app NOLOGIN; GRANT tagtrail_app TO postgres;), then restore the dump ' +
        'again into an empty database (docs/operations.md, "Backups with DATABASE_URL")',
    );

    // The role made after the restore: still without its privileges.
    await query(server.urlFor('postgres'), 'CREATE ROLE tagtrail_app NOLOGIN');
    await expect(open()).rejects.toThrow(
      /^the role tagtrail_app holds no privileges on this database's tables/,
    );
  }, 120_000);

  it('opens a database whose role holds its privileges', async () => {
    const admin = new pg.Client({ connectionString: server.urlFor('postgres') });
    await admin.connect();
    await admin.query('CREATE DATABASE fresh');
    await admin.end();
    const opened = await openDatabase({
      DATABASE_URL: server.urlFor('fresh'),
      dataDir: '/nonexistent',
      DATABASE_POOL_SIZE: 2,
    });
    await opened.close();
  }, 120_000);
});
