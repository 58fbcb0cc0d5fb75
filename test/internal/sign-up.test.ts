import { describe, expect, it } from 'vitest';
import { signUpRequest, signUpState } from './auth-requests.js';
import { buildInternalApp, expectInternalError, freshAddress } from './helpers.js';

describe('GET /internal/auth/sign-up-state', () => {
  it('a fresh install has no user and takes its first sign-up; afterwards sign-up is closed', async () => {
    const t = await buildInternalApp({ signup: 'first-user-only' });
    try {
      const before = await signUpState(t);
      expect(before.statusCode, before.body).toBe(200);
      expect(before.json()).toEqual({ data: { has_users: false, sign_up_open: true } });
      const first = await signUpRequest(t, {
        email: 'state@example.test',
        password: 'long enough',
        organization_name: 'State',
      });
      expect(first.statusCode, first.body).toBe(201);
      expect((await signUpState(t)).json()).toEqual({ data: { has_users: true, sign_up_open: false } });
    } finally {
      await t.close();
    }
  });

  it('closed: never open, even without users; open: always open', async () => {
    const closed = await buildInternalApp({ signup: 'closed' });
    try {
      expect((await signUpState(closed)).json()).toEqual({ data: { has_users: false, sign_up_open: false } });
    } finally {
      await closed.close();
    }
    const open = await buildInternalApp({ signup: 'open' });
    try {
      await signUpRequest(open, { email: 'o@example.test', password: 'long enough', organization_name: 'O' });
      expect((await signUpState(open)).json()).toEqual({ data: { has_users: true, sign_up_open: true } });
    } finally {
      await open.close();
    }
  });

  it('answers GET only: a POST gets 405', async () => {
    const t = await buildInternalApp();
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/internal/auth/sign-up-state',
        remoteAddress: freshAddress(),
      });
      expect(res.statusCode).toBe(405);
    } finally {
      await t.close();
    }
  });
});

describe('sign-up modes', () => {
  it('first-user-only (the default): the first sign-up works, the second gets 403', async () => {
    const t = await buildInternalApp({ signup: 'first-user-only' });
    try {
      const first = await signUpRequest(t, {
        email: 'first@example.test',
        password: 'long enough',
        organization_name: 'First',
      });
      expect(first.statusCode, first.body).toBe(201);
      const second = await signUpRequest(t, {
        email: 'second@example.test',
        password: 'long enough',
        organization_name: 'Second',
      });
      expectInternalError(second, { status: 403, type: 'forbidden', detail: /first user/ });
    } finally {
      await t.close();
    }
  });

  it('first-user-only admits exactly one of concurrent first sign-ups', async () => {
    const t = await buildInternalApp({ signup: 'first-user-only' });
    try {
      const results = await Promise.all(
        [1, 2, 3, 4].map((i) =>
          signUpRequest(t, {
            email: `racer${i}@example.test`,
            password: 'long enough',
            organization_name: `R${i}`,
          }),
        ),
      );
      expect(results.map((r) => r.statusCode).sort()).toEqual([201, 403, 403, 403]);
    } finally {
      await t.close();
    }
  });

  it('open: anyone may sign up, each with an organization of their own; emails are unique', async () => {
    const t = await buildInternalApp({ signup: 'open' });
    try {
      const a = await signUpRequest(t, {
        email: 'a@example.test',
        password: 'long enough',
        organization_name: 'A',
      });
      const b = await signUpRequest(t, {
        email: 'b@example.test',
        password: 'long enough',
        organization_name: 'B',
      });
      expect(a.statusCode).toBe(201);
      expect(b.statusCode).toBe(201);
      expect(a.json().data.organization.id).not.toBe(b.json().data.organization.id);
      const again = await signUpRequest(t, {
        email: 'A@Example.test',
        password: 'long enough',
        organization_name: 'C',
      });
      expectInternalError(again, { status: 409, type: 'conflict' });
    } finally {
      await t.close();
    }
  });

  it('closed: nobody may sign up', async () => {
    const t = await buildInternalApp({ signup: 'closed' });
    try {
      const res = await signUpRequest(t, {
        email: 'x@example.test',
        password: 'long enough',
        organization_name: 'X',
      });
      expectInternalError(res, {
        status: 403,
        type: 'forbidden',
        detail: 'Sign-up is closed on this deployment',
      });
    } finally {
      await t.close();
    }
  });
});
