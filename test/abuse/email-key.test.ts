import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { normalEmail } from '../../src/accounts/device-cookies.js';

/**
 * The sign-in limiter keys an email by normalEmail, the account is found by PostgreSQL's
 * lower(email): any two spellings the database takes for one address must share a key, or
 * each spelling brings a fresh budget of password guesses for the same account (under
 * glibc's C.UTF-8 `lower('kİm')` is `kim`, which JavaScript's lower case is not). Checked
 * against the run's own server, character by character: on the machine's PostgreSQL (a
 * UTF-8 locale) that is every character lower() changes; the embedded server's C locale
 * changes only A-Z.
 */
describe('the sign-in limiter keys an email as the database matches it', () => {
  it('every character lower() changes keys as its lower case, alone, inside a word and last', async () => {
    const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await client.connect();
    try {
      const { rows } = await client.query<{ c: string; l: string }>(
        `SELECT chr(i) AS c, lower(chr(i)) AS l
           FROM generate_series(1, 196607) i
          WHERE i NOT BETWEEN 55296 AND 57343 AND lower(chr(i)) <> chr(i)`,
      );
      expect(rows.length).toBeGreaterThanOrEqual(26);
      const differ = rows.flatMap(({ c, l }) =>
        (
          [
            [c, l],
            [`a${c}b@x.test`, `a${l}b@x.test`],
            [`ab${c}@x.test`, `ab${l}@x.test`],
          ] as const
        )
          .filter(([typed, lower]) => normalEmail(typed) !== normalEmail(lower))
          .map(([typed]) => typed),
      );
      expect(differ).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
