/**
 * The shared HTTP contract's authentication rules (API-SPEC Authentication), checked on every
 * route in `app.publicRoutes`, so a route added later is covered without touching this file.
 */
import { generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliCaller } from '../../src/caller.js';
import type { PublicRoute } from '../../src/http/plugins/methods.js';
import type { TokenClaims } from '../../src/keys/tokens.js';
import { ALL_SCOPES, bearer, type TestApp, type TestOrg } from '../helpers/app.js';
import { expectErrorEnvelope } from '../helpers/error-envelope.js';
import {
  callRoute,
  contractApps,
  expectStoppedAtQuery,
  expectUnauthorized,
  type RouteChange,
  UNKNOWN_QUERY,
} from './route-contract-requests.js';

const { real, targets } = await contractApps();

interface Credentials {
  org: TestOrg;
  /** Every mintable scope. */
  full: string;
  expiredJwt: string;
  expiredRecord: string;
  revoked: string;
  session: string;
  sessionNamingKey: string;
  previewMinted: string;
  signedForPreview: string;
  productionSignedPreviewRecord: string;
  foreignKey: string;
  algNone: string;
  tampered: string;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

async function credentials(t: TestApp): Promise<Credentials> {
  const org = await t.createOrg();
  const full = await org.key();
  const claimsOf = (id: string): TokenClaims => ({ use: 'api_key', id, orgId: org.id, scopes: ALL_SCOPES });
  const pastSeconds = Math.floor(Date.now() / 1000) - 3600;

  // A real record with a short expiry, moved into the past, and a token whose exp has passed.
  const shortLived = await org.key(ALL_SCOPES, { expiresInSeconds: 60 });
  await t.database.db.pool.query('UPDATE api_keys SET expires_at = to_timestamp($2) WHERE id = $1', [
    shortLived.id,
    pastSeconds,
  ]);
  const expiredJwt = await t.services.tokens.sign({ ...claimsOf(shortLived.id), expiresAt: pastSeconds });
  // The record expired while the token it was minted with still carries a future exp.
  const recordOnly = await org.key(ALL_SCOPES, { expiresInSeconds: 3600 });
  await t.database.db.pool.query(
    "UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE id = $1",
    [recordOnly.id],
  );

  const revoked = await org.key();
  await t.services.keys.revoke(cliCaller(org.id), revoked.id);

  const preview = await t.services.keys.mint({
    caller: cliCaller(org.id),
    scopes: ALL_SCOPES,
    environment: 'preview',
  });

  const foreign = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const foreignKey = await new SignJWT({ org: org.id, scp: ALL_SCOPES, use: 'api_key' })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
    .setIssuer('tagtrail')
    .setAudience('tagtrail:production')
    .setSubject(full.id)
    .setIssuedAt()
    .sign(foreign.privateKey);
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    org: org.id,
    scp: ALL_SCOPES,
    use: 'api_key',
    iss: 'tagtrail',
    aud: 'tagtrail:production',
  };
  const algNone = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ ...payload, sub: full.id, iat: now })}.`;
  // A genuine token whose payload names another organization; the signature no longer fits.
  const [head, , signature] = full.token.split('.');
  const tampered = `${head}.${b64url({ ...payload, org: org.id + 1000, sub: full.id, iat: now })}.${signature}`;

  return {
    org,
    full: full.token,
    expiredJwt,
    expiredRecord: recordOnly.token,
    revoked: revoked.token,
    session: await t.services.tokens.sign({
      ...claimsOf('00000000-0000-4000-8000-000000000001'),
      use: 'session',
    }),
    sessionNamingKey: await t.services.tokens.sign({ ...claimsOf(full.id), use: 'session' }),
    previewMinted: preview.token,
    signedForPreview: await t.services.tokens.sign(claimsOf(full.id), 'preview'),
    productionSignedPreviewRecord: await t.services.tokens.sign(claimsOf(preview.key.id)),
    foreignKey,
    algNone,
    tampered,
  };
}

for (const { name, t, routes } of targets) {
  describe(name, () => {
    let creds: Credentials;
    beforeAll(async () => {
      creds = await credentials(t);
    });
    const call = (route: PublicRoute, change?: RouteChange) => callRoute(t, creds.full, route, change);

    it('has routes to check', () => {
      expect(routes.length).toBeGreaterThan(0);
    });

    for (const route of routes) {
      describe(`${route.method} ${route.url}`, () => {
        it('requires authentication (declares config.scopes)', () => {
          expect(route.scopes).toBeInstanceOf(Array);
        });

        it('no Authorization header: 401 Missing authorization header', async () => {
          expectUnauthorized(
            await call(route, { headers: { authorization: undefined } }),
            'Missing authorization header',
          );
        });

        it.each([['Basic xyz'], ['Bearer'], ['Bearer '], ['Token abc.def.ghi'], ['Bearer a b']])(
          'Authorization: %j: 401 Invalid authorization header format',
          async (value) => {
            expectUnauthorized(
              await call(route, { headers: { authorization: value } }),
              'Invalid authorization header format',
            );
          },
        );

        it.each([
          ['garbage', () => 'garbage'],
          ['three garbage segments', () => 'not.a.jwt'],
          ['signed by another key', () => creds.foreignKey],
          ['alg none', () => creds.algNone],
          ['tampered payload', () => creds.tampered],
        ])('token %s: 401 Invalid or expired token', async (_name, token) => {
          expectUnauthorized(await call(route, { headers: bearer(token()) }), 'Invalid or expired token');
        });

        it('token whose exp has passed, of a real key: 401 API key has expired', async () => {
          expectUnauthorized(await call(route, { headers: bearer(creds.expiredJwt) }), 'API key has expired');
        });

        it('key record past its expires_at: 401 API key has expired', async () => {
          expectUnauthorized(
            await call(route, { headers: bearer(creds.expiredRecord) }),
            'API key has expired',
          );
        });

        it('revoked key: 401 API key has been revoked', async () => {
          expectUnauthorized(
            await call(route, { headers: bearer(creds.revoked) }),
            'API key has been revoked',
          );
        });

        it('credential only in X-API-Key: 401 Use Authorization: Bearer <token>', async () => {
          expectUnauthorized(
            await call(route, { headers: { authorization: undefined, 'x-api-key': creds.full } }),
            'Use Authorization: Bearer <token>',
          );
        });

        it.each([
          ['a web session token', () => creds.session],
          ['a session token naming a real key id', () => creds.sessionNamingKey],
        ])('%s: 401', async (_name, token) => {
          expectUnauthorized(await call(route, { headers: bearer(token()) }));
        });

        it.each([
          ['a key minted for preview', () => creds.previewMinted],
          ['a production key signed for preview', () => creds.signedForPreview],
          ['a preview key record signed for production', () => creds.productionSignedPreviewRecord],
        ])('%s: 401 (keys are bound to one environment)', async (_name, token) => {
          expectUnauthorized(await call(route, { headers: bearer(token()) }));
        });

        if (route.scopes && route.scopes.length > 0) {
          const required = route.scopes;
          it(`key with every scope except ${required.join(', ')}: 403 forbidden`, async () => {
            const key = await creds.org.key(ALL_SCOPES.filter((s) => !required.includes(s)));
            expectErrorEnvelope(await call(route, { headers: bearer(key.token) }), {
              status: 403,
              type: 'forbidden',
            });
          });

          it('key with no scopes: 403 forbidden', async () => {
            const key = await creds.org.key([]);
            expectErrorEnvelope(await call(route, { headers: bearer(key.token) }), {
              status: 403,
              type: 'forbidden',
            });
          });
        }

        it(`key with exactly the required scopes [${route.scopes ?? []}] is let through`, async () => {
          const key = await creds.org.key(route.scopes ?? []);
          expectStoppedAtQuery(await call(route, { headers: bearer(key.token), query: UNKNOWN_QUERY }));
        });
      });
    }
  });
}

describe('every registered /api/v1 route', () => {
  it('includes the organization lookup', () => {
    expect(real.app.publicRoutes).toContainEqual({
      method: 'GET',
      url: '/api/v1/orgs/me',
      scopes: [],
      hasBody: false,
    });
  });
});
