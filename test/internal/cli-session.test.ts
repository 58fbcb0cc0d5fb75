import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tagtrail } from '../helpers/cli-in-process.js';
import { buildInternalApp, expectInternalError, type InternalTestApp } from './helpers.js';

describe('tagtrail session token', () => {
  let t: InternalTestApp;
  beforeAll(async () => {
    t = await buildInternalApp({ signup: 'closed' });
  });
  afterAll(() => t.close());

  it('creates admin@org-ID.local when the organization has no user, and prints a working cookie and CSRF token', async () => {
    const org = await t.services.organizations.create('Operated');
    const printed = JSON.parse(
      await tagtrail(t.database.url, ['session', 'token', '--org', String(org.id), '--json']),
    );
    expect(printed).toEqual({
      token: expect.any(String),
      csrf_token: expect.any(String),
      user_id: expect.any(Number),
      expires_at: expect.stringMatching(/\.\d{3}Z$/),
    });
    const { rows } = await t.database.db.pool.query(
      'SELECT email, role, org_id, password_hash FROM users WHERE id = $1',
      [printed.user_id],
    );
    expect(rows[0]).toMatchObject({ email: `admin@org-${org.id}.local`, role: 'admin', org_id: org.id });
    expect(rows[0].password_hash).toMatch(/^\$argon2id\$/);

    const cookie = `tagtrail_session=${printed.token}`;
    const session = await t.app.inject({ method: 'GET', url: '/internal/session', headers: { cookie } });
    expect(session.statusCode, session.body).toBe(200);
    expect(session.json().data).toMatchObject({
      user: { id: printed.user_id, email: `admin@org-${org.id}.local`, role: 'admin' },
      organization: { id: org.id, name: 'Operated' },
      csrf_token: printed.csrf_token,
      expires_at: printed.expires_at,
    });
    const minted = await t.app.inject({
      method: 'POST',
      url: '/internal/keys',
      headers: { cookie, 'x-csrf-token': printed.csrf_token, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'from the CLI session', scopes: [], expires_at: null }),
    });
    expect(minted.statusCode, minted.body).toBe(201);

    // A second token is for the same user.
    const again = JSON.parse(
      await tagtrail(t.database.url, ['session', 'token', '--org', String(org.id), '--json']),
    );
    expect(again.user_id).toBe(printed.user_id);
    expect(again.token).not.toBe(printed.token);
  });

  it('when somebody took admin@org-ID.local first (open sign-up), creates an administrator of another address', async () => {
    const org = await t.services.organizations.create('Squatted');
    const squatter = await t.services.organizations.create('Elsewhere');
    await t.database.db.pool.query("INSERT INTO users (org_id, email, role) VALUES ($1, $2, 'admin')", [
      squatter.id,
      `admin@org-${org.id}.local`,
    ]);
    const printed = JSON.parse(
      await tagtrail(t.database.url, ['session', 'token', '--org', String(org.id), '--json']),
    );
    const { rows } = await t.database.db.pool.query('SELECT email, role, org_id FROM users WHERE id = $1', [
      printed.user_id,
    ]);
    expect(rows[0]).toMatchObject({ role: 'admin', org_id: org.id });
    expect(rows[0].email).toMatch(new RegExp(`^admin-[0-9a-f]{12}@org-${org.id}\\.local$`));
    const again = JSON.parse(
      await tagtrail(t.database.url, ['session', 'token', '--org', String(org.id), '--json']),
    );
    expect(again.user_id).toBe(printed.user_id);
  });

  it('refuses an organization that does not exist', async () => {
    await expect(
      tagtrail(t.database.url, ['session', 'token', '--org', '2147483000', '--json']),
    ).rejects.toThrow('organization 2147483000 not found');
    expectInternalError(await t.app.inject({ method: 'GET', url: '/internal/session' }), { status: 401 });
  });
});
