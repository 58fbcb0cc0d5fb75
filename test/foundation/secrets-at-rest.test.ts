import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import { SecretKeysMissing } from '../../src/secrets/reseal.js';
import { keyId, SecretBox } from '../../src/secrets/secret-box.js';
import { createServices, type Services } from '../../src/services.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { confirmingCode } from '../helpers/totp-codes.js';

/**
 * Secrets the service must read back are stored sealed (docs/operations.md, "Secrets at
 * rest"): what the database holds does not give them away, each start seals what is not,
 * a key is rotated by restarting with the new key first, and an instance whose keys cannot
 * open what is stored does not start.
 */

const keyA = Buffer.alloc(32, 0xa1);
const keyB = Buffer.alloc(32, 0xb2);
const boxOf = (...keys: Buffer[]) => new SecretBox(keys);

let database: TestDatabase;
const open: Services[] = [];

async function start(secrets: SecretBox): Promise<Services> {
  const services = await createServices(database.db, {
    TAGTRAIL_ENV: 'production',
    REDIS_URL: undefined,
    TAGTRAIL_RATE_LIMIT: 1000,
    TAGTRAIL_RATE_WINDOW_SECONDS: 60,
    secrets,
  });
  open.push(services);
  return services;
}

const q = <T extends Record<string, unknown>>(sql: string, params: unknown[] = []) =>
  database.db.pool.query<T>(sql, params).then((r) => r.rows);

/** Everything stored in the three columns that keep secrets, as text. */
async function storedSecrets(): Promise<string[]> {
  const rows = await q<{ v: string }>(
    `SELECT secret AS v FROM webhook_endpoints UNION ALL SELECT secret FROM user_totp
     UNION ALL SELECT CASE WHEN jsonb_typeof(private_jwk) = 'string' THEN private_jwk #>> '{}' ELSE private_jwk::text END
     FROM signing_keys`,
  );
  return rows.map((r) => r.v);
}

/** An organization with a webhook endpoint and a person enrolled in two-factor sign-in. */
async function seed(services: Services) {
  const org = await services.organizations.create(`Sealed ${Math.random()}`);
  const [user] = await q<{ id: number }>(
    `INSERT INTO users (org_id, email, password_hash) VALUES ($1, $2, 'x') RETURNING id`,
    [org.id, `p${Math.random()}@example.test`],
  );
  const hook = await services.internal.webhooks.create(org.id, {
    url: 'https://hooks.example.test/in',
    event_types: ['asset.moved'],
  });
  const enrolment = await services.internal.totp.startEnrolment(
    cliCaller(org.id),
    user!.id,
    'p@example.test',
  );
  return { org, userId: user!.id, webhookSecret: hook.secret, totpSecret: enrolment.secret };
}

// A database of its own per case: what one case sealed is the next one's starting point otherwise.
beforeEach(async () => {
  database = await createTestDatabase();
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  await database.drop();
});

describe('secrets at rest', () => {
  it('stores the webhook, two-factor and signing secrets sealed, and uses them as given', async () => {
    const services = await start(boxOf(keyA));
    const site = await seed(services);
    const stored = await storedSecrets();
    expect(stored.length).toBeGreaterThanOrEqual(3);
    for (const value of stored) {
      expect(value).toMatch(new RegExp(`^tt1:${keyId(keyA)}:`));
      expect(value).not.toContain(site.webhookSecret.slice(6));
      expect(value).not.toContain(site.totpSecret);
      expect(value).not.toContain('"d"');
    }
    // The confirming code of the secret the person was shown turns two-factor sign-in on.
    const codes = await services.internal.totp.confirmEnrolment(
      cliCaller(site.org.id),
      site.userId,
      await confirmingCode(site.totpSecret),
    );
    expect(codes).toHaveLength(10);
    // A second instance with the same key signs the same tokens (one signing key for all).
    const second = await start(boxOf(keyA));
    const claims = {
      use: 'api_key' as const,
      id: '00000000-0000-4000-8000-000000000001',
      orgId: site.org.id,
      scopes: [],
    };
    const token = await services.tokens.sign(claims);
    expect(await second.tokens.verify(token)).toMatchObject({ ok: true });
  });

  it('seals at start what was stored as given, and what it holds does not change', async () => {
    const plain = await start(boxOf());
    const site = await seed(plain);
    const before = await storedSecrets();
    expect(before).toContain(site.webhookSecret);
    expect(before).toContain(site.totpSecret);
    const token = await plain.tokens.sign({ use: 'session', id: 'a', orgId: site.org.id, scopes: [] });

    const sealed = await start(boxOf(keyA));
    for (const value of await storedSecrets()) expect(SecretBox.keyIdOf(value)).toBe(keyId(keyA));
    const [row] = await q<{ secret: string }>('SELECT secret FROM webhook_endpoints WHERE org_id = $1', [
      site.org.id,
    ]);
    expect(boxOf(keyA).open(row!.secret, `webhook_endpoints.secret org=${site.org.id}`)).toBe(
      site.webhookSecret,
    );
    expect(await sealed.tokens.verify(token)).toMatchObject({ ok: true });
    // The enrolment begun before sealing is confirmed with a code of the secret shown then.
    const codes = await sealed.internal.totp.confirmEnrolment(
      cliCaller(site.org.id),
      site.userId,
      await confirmingCode(site.totpSecret),
    );
    expect(codes).toHaveLength(10);
  });

  it('rotates: the new key first and the old after seals everything anew; then the old key can go', async () => {
    const site = await seed(await start(boxOf(keyA)));
    await start(boxOf(keyB, keyA));
    const rotated = await storedSecrets();
    for (const value of rotated) expect(SecretBox.keyIdOf(value)).toBe(keyId(keyB));
    const [row] = await q<{ secret: string }>('SELECT secret FROM user_totp WHERE user_id = $1', [
      site.userId,
    ]);
    expect(boxOf(keyB).open(row!.secret, `user_totp.secret org=${site.org.id} user=${site.userId}`)).toBe(
      site.totpSecret,
    );
    await start(boxOf(keyB));
    expect(await storedSecrets()).toEqual(rotated);
  });

  it('does not start with keys that cannot open what is stored, and changes nothing', async () => {
    await seed(await start(boxOf(keyB)));
    const before = await storedSecrets();
    const onlyOld = start(boxOf(keyA));
    await expect(onlyOld).rejects.toBeInstanceOf(SecretKeysMissing);
    await expect(onlyOld).rejects.toThrow(new RegExp(`key\\(s\\) ${keyId(keyB)}, which this instance lacks`));
    await expect(start(boxOf())).rejects.toThrow(/it has no key/);
    expect(await storedSecrets()).toEqual(before);
  });

  it('waits for another start sealing with other keys, then refuses instead of sealing half', async () => {
    const site = await seed(await start(boxOf()));
    // Another instance's start, given keyB, holds the pass's lock and seals everything.
    const other = await database.db.pool.connect();
    try {
      await other.query('BEGIN');
      await other.query("SELECT pg_advisory_xact_lock(hashtext('tagtrail:secrets-at-rest'))");
      let settled = false;
      const mine = start(boxOf(keyA)).finally(() => {
        settled = true;
      });
      mine.catch(() => undefined);
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false);
      const b = boxOf(keyB);
      await other.query('UPDATE webhook_endpoints SET secret = $1 WHERE org_id = $2', [
        b.seal(site.webhookSecret, `webhook_endpoints.secret org=${site.org.id}`),
        site.org.id,
      ]);
      await other.query('UPDATE user_totp SET secret = $1 WHERE user_id = $2', [
        b.seal(site.totpSecret, `user_totp.secret org=${site.org.id} user=${site.userId}`),
        site.userId,
      ]);
      const { rows } = await other.query<{ id: string; jwk: string }>(
        'SELECT id, private_jwk::text AS jwk FROM signing_keys',
      );
      for (const { id, jwk } of rows) {
        await other.query('UPDATE signing_keys SET private_jwk = to_jsonb($1::text) WHERE id = $2', [
          b.seal(jwk, `signing_keys.private_jwk id=${id}`),
          id,
        ]);
      }
      await other.query('COMMIT');
      await expect(mine).rejects.toThrow(new RegExp(`key\\(s\\) ${keyId(keyB)}, which this instance lacks`));
    } finally {
      other.release();
    }
    for (const value of await storedSecrets()) expect(SecretBox.keyIdOf(value)).toBe(keyId(keyB));
  });

  it('does not start when a sealed secret was moved to another row', async () => {
    const services = await start(boxOf(keyB));
    const a = await seed(services);
    const b = await seed(services);
    await q(
      `UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE org_id = $1)
       WHERE org_id = $2`,
      [a.org.id, b.org.id],
    );
    await expect(start(boxOf(keyB))).rejects.toThrow(/1 that do not open under their key/);
  });
});
