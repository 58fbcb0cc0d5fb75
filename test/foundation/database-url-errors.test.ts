/**
 * A DATABASE_URL the service cannot use stops the start (and every command) with a message
 * that names the setting and its server, with the password hidden, and the driver's reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseUrlError, openDatabase } from '../../src/db/connect.js';
import { createTestDatabase, databaseUrl, type TestDatabase } from '../helpers/database.js';
import { closedPort } from '../helpers/listening.js';

const open = (url: string, migrate?: boolean) =>
  openDatabase({ DATABASE_URL: url, dataDir: '/nonexistent', DATABASE_POOL_SIZE: 2 }, { migrate });

describe('an unusable DATABASE_URL', () => {
  let target: TestDatabase;
  beforeAll(async () => {
    target = await createTestDatabase();
  });
  afterAll(() => target?.drop());

  it.each([true, false])(
    'names the setting, hides the password and says why (migrate %s)',
    async (migrate) => {
      const url = `postgres://tagtrail:s3cret-pw@127.0.0.1:${await closedPort()}/tagtrail`;
      const err = await open(url, migrate).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DatabaseUrlError);
      const message = (err as Error).message;
      expect(message).toMatch(
        /^cannot connect to DATABASE_URL \(postgres:\/\/\(hidden\)@127\.0\.0\.1:\d+\/tagtrail\): /,
      );
      expect(message).toContain('ECONNREFUSED');
      expect(message).not.toContain('s3cret-pw');
    },
  );

  it('says so of a database the server does not have', async () => {
    const url = databaseUrl(target.url, `tagtrail_missing_${process.pid}`);
    await expect(open(url)).rejects.toThrow(
      /^cannot connect to DATABASE_URL \(.*\): database "tagtrail_missing_\d+" does not exist$/,
    );
  });

  it('opens one it can use', async () => {
    const opened = await open(target.url);
    await opened.close();
  });
});
