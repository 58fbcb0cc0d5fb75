/**
 * Roles on every /internal/ route (docs/web-app.md "Roles and members"): a matrix over the
 * routes the app registers (so a route added later is covered without touching this file)
 * and the three roles. The least role each route should need is worked out here from its
 * path and method, independently of what the route declares, so a route declaring too weak
 * a role fails as surely as one declaring none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roleIncludes, USER_ROLES, type UserRole } from '../../src/auth-types.js';
import type { InternalRoute } from '../../src/http/plugins/methods.js';
import { type Browser, buildInternalApp, expectInternalError, type InternalTestApp } from './helpers.js';
import { addMember, browserOf } from './members-helpers.js';

/** Administration: members, invitations and API keys, read or written. */
const ADMIN_AREAS = ['/internal/keys', '/internal/members', '/internal/invitations', '/internal/webhooks'];
/** Readers and their credentials are administered; anybody signed in may look at them. */
const ADMIN_WRITES = ['/internal/readers'];
/** Each person's own session and account, whatever their role. */
const SELF_SERVICE = ['/internal/session', '/internal/auth/', '/internal/account'];

const under = (url: string, prefixes: string[]) =>
  prefixes.some((p) => url === p || url.startsWith(p.endsWith('/') ? p : `${p}/`));

function expectedRole(route: Pick<InternalRoute, 'method' | 'url'>): UserRole {
  if (under(route.url, ADMIN_AREAS)) return 'admin';
  if (under(route.url, SELF_SERVICE)) return 'viewer';
  if (route.method === 'GET') return 'viewer';
  if (under(route.url, ADMIN_WRITES)) return 'admin';
  return 'editor';
}

/** A concrete URL for a route pattern: every path parameter 1 (ids of nothing here). */
const concrete = (url: string) => url.replace(/:[a-z_]+/g, '1');

describe('roles on every /internal/ route', () => {
  let t: InternalTestApp;
  let admin: Browser;
  let routes: InternalRoute[];

  beforeAll(async () => {
    t = await buildInternalApp();
    admin = await t.signUp();
    routes = t.app.internalRouteList.filter((r) => !r.signedOut);
  });
  afterAll(() => t.close());

  it('every /internal/ route but sign-up and sign-in declares the least role that may call it', () => {
    expect(routes.length).toBeGreaterThan(40);
    const undeclared = routes.filter((r) => r.role === undefined).map((r) => `${r.method} ${r.url}`);
    expect(undeclared, 'routes without config.role').toEqual([]);
    const declared = Object.fromEntries(routes.map((r) => [`${r.method} ${r.url}`, r.role]));
    const expected = Object.fromEntries(routes.map((r) => [`${r.method} ${r.url}`, expectedRole(r)]));
    expect(declared).toEqual(expected);
  });

  it('the rules name the roles the issue asks for, on routes that exist', () => {
    const roleOf = (method: string, url: string) => {
      const route = routes.find((r) => r.method === method && r.url === url);
      expect(route, `${method} ${url}`).toBeDefined();
      return route?.role;
    };
    expect(roleOf('GET', '/internal/keys')).toBe('admin');
    expect(roleOf('POST', '/internal/readers')).toBe('admin');
    expect(roleOf('POST', '/internal/readers/:reader_id/mqtt-credentials')).toBe('admin');
    expect(roleOf('GET', '/internal/readers')).toBe('viewer');
    expect(roleOf('POST', '/internal/assets')).toBe('editor');
    expect(roleOf('POST', '/internal/import/assets')).toBe('editor');
    expect(roleOf('POST', '/internal/handheld')).toBe('editor');
    expect(roleOf('GET', '/internal/export/assets')).toBe('viewer');
    expect(roleOf('POST', '/internal/auth/password')).toBe('viewer');
  });

  // One fresh session per call: sign-out, role changes and removals end sessions.
  for (const role of USER_ROLES) {
    it(`${role === 'viewer' ? 'a' : 'an'} ${role} is refused with 403 exactly where the route needs more, and let through elsewhere`, async () => {
      const member = role === 'admin' ? null : await addMember(t, admin.orgId, role);
      const userId = member?.id ?? admin.userId;
      let refused = 0;
      for (const route of routes) {
        const caller = await browserOf(t, admin.orgId, { id: userId, email: '' });
        const res = await caller.request({
          method: route.method as 'GET',
          url: concrete(route.url),
          ...(route.method === 'GET' || route.method === 'DELETE'
            ? {}
            : {
                headers: {
                  'content-type':
                    route.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
                },
                payload: '{}',
              }),
        });
        const required = expectedRole(route);
        const context = `${role} ${route.method} ${route.url}`;
        if (roleIncludes(role, required)) {
          expect(res.statusCode, `${context}: ${res.body.slice(0, 200)}`).not.toBe(403);
          expect(res.statusCode, context).not.toBe(401);
          expect(res.statusCode, context).toBeLessThan(500);
        } else {
          refused++;
          expectInternalError(res, {
            status: 403,
            type: 'forbidden',
            detail: `This needs the ${required} role; you are ${role === 'editor' ? 'an' : 'a'} ${role}`,
          });
        }
      }
      if (role === 'admin') expect(refused).toBe(0);
      else expect(refused).toBeGreaterThan(role === 'viewer' ? 20 : 5);
    });
  }

  it('a refused write changes nothing', async () => {
    const viewer = await addMember(t, admin.orgId, 'viewer');
    const caller = await browserOf(t, admin.orgId, viewer);
    expectInternalError(await caller.post('/internal/assets', { name: 'not mine to add' }), { status: 403 });
    expectInternalError(await caller.post('/internal/keys', { name: 'k', scopes: [], expires_at: null }), {
      status: 403,
    });
    // A fresh session of the admin: the matrix above signed them in once per route, more
    // than one person's cap (SESSIONS_PER_USER), which ended their first session.
    const adminNow = await browserOf(t, admin.orgId, { id: admin.userId, email: '' });
    expect((await adminNow.get('/internal/assets')).json().total_count).toBe(0);
    expect((await adminNow.get('/internal/keys')).json().total_count).toBe(0);
    // Reading is allowed.
    expect((await caller.get('/internal/assets')).statusCode).toBe(200);
  });
});
