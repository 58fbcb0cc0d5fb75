import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  callerOf,
  clearedSessionCookie,
  deviceCookieOf,
  sessionOf,
  setDeviceCookie,
  setSessionCookie,
} from '../../http/plugins/internal-auth.js';
import { addressBucket } from '../../http/rate-limit/address-bucket.js';
import { takeToken } from '../../http/rate-limit/gate.js';
import { DataEnvelope, NoContent } from '../../http/schemas/common.js';
import type { InternalServices } from '../../internal-services.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../passwords.js';
import { SessionSchema } from './session.js';

export const Email = Type.String({
  minLength: 3,
  maxLength: 254,
  pattern: '^[^\\s@]+@[^\\s@]+$',
  'x-message': 'must be an email address',
});

export const NewPassword = Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH });
/** A password being checked: any length the store could hold, so a wrong one is a plain 401. */
export const GivenPassword = Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH });

const SignUpBody = Type.Object(
  {
    email: Email,
    password: NewPassword,
    organization_name: Type.String({ minLength: 1, maxLength: 255 }),
  },
  { additionalProperties: false },
);

/** The six digits an authenticator app shows (RFC 6238). */
export const TotpCode = Type.String({
  pattern: '^[0-9]{6}$',
  'x-message': 'must be the 6-digit code of the app',
});

/** A recovery code as shown (`abcd-efgh-ijkl-mnop`); dashes, spaces and case do not matter. */
export const RecoveryCode = Type.String({
  minLength: 16,
  maxLength: 40,
  pattern: '^[A-Za-z2-7 -]+$',
  'x-message': 'must be a recovery code as shown: 16 letters and digits 2-7',
});

const SignInBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: GivenPassword,
    /** Needed when the account has two-factor sign-in on (docs/web-app.md "Accounts"). */
    totp_code: Type.Optional(TotpCode),
    /** In place of `totp_code`: one of the account's recovery codes, spent by this sign-in. */
    recovery_code: Type.Optional(RecoveryCode),
  },
  { additionalProperties: false },
);

const PasswordBody = Type.Object(
  { current_password: GivenPassword, new_password: NewPassword },
  { additionalProperties: false },
);

/** Whether anybody can sign in yet, and whether sign-up would be accepted now. */
const SignUpState = Type.Object(
  { has_users: Type.Boolean(), sign_up_open: Type.Boolean() },
  { additionalProperties: false },
);

/** Sign-up, sign-in, sign-out and password change (docs/web-app.md "Sessions and CSRF"). */
export const authRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/internal/auth/sign-up',
      {
        config: { signedOut: true },
        schema: { body: SignUpBody, response: { 201: DataEnvelope(SessionSchema) } },
      },
      async (request, reply) => {
        await takeToken(s.signUpLimiter, addressBucket(request.ip), request, reply, {
          headers: false,
          what: 'sign-ups per hour from one address',
        });
        const { user, organization } = await s.accounts.signUp({
          email: request.body.email,
          password: request.body.password,
          organizationName: request.body.organization_name,
        });
        const issued = await s.sessions.create(organization.id, user.id);
        setSessionCookie(request, reply, issued);
        setDeviceCookie(request, reply, s.deviceCookies.issue(user.email));
        reply.code(201);
        return {
          data: {
            user: { id: user.id, email: user.email, role: user.role },
            organization: { id: organization.id, name: organization.name },
            csrf_token: issued.csrfToken,
            expires_at: issued.expiresAt.toISOString(),
            totp_enrolment_required: false,
          },
        };
      },
    );

    app.get(
      '/internal/auth/sign-up-state',
      {
        config: { signedOut: true },
        schema: { response: { 200: DataEnvelope(SignUpState) } },
      },
      async () => {
        const state = await s.accounts.signUpState();
        return { data: { has_users: state.hasUsers, sign_up_open: state.signUpOpen } };
      },
    );

    app.post(
      '/internal/auth/sign-in',
      {
        config: { signedOut: true },
        schema: { body: SignInBody, response: { 200: DataEnvelope(SessionSchema) } },
      },
      async (request, reply) => {
        const { email } = request.body;
        // A browser that signed in as this email before has a budget of its own (SignInLimiter).
        const device = s.deviceCookies.deviceFor(deviceCookieOf(request), email);
        await s.signInLimiter.take(request, email, device);
        const user = await s.accounts.signIn(email, request.body.password);
        // Every attempt, wrong code or not, took a token above: codes are limited like passwords.
        await s.totp.checkSignIn(user.orgId, user, {
          code: request.body.totp_code,
          recoveryCode: request.body.recovery_code,
        });
        const issued = await s.sessions.create(user.orgId, user.id);
        const session = await s.sessions.authenticate(issued.token);
        if (!session) throw new Error('a session just created did not authenticate');
        setSessionCookie(request, reply, issued);
        // A new one each time: a fresh bucket, earned with the password (and code).
        setDeviceCookie(request, reply, s.deviceCookies.issue(email));
        return { data: s.sessions.view(session) };
      },
    );

    app.post(
      '/internal/auth/sign-out',
      {
        config: { role: 'viewer', totpEnrolment: true },
        schema: { response: { 204: NoContent('Signed out; the session is revoked and the cookie cleared') } },
      },
      async (request, reply) => {
        const session = sessionOf(request);
        await s.sessions.revoke(session.orgId, session.sessionId);
        reply.header('set-cookie', clearedSessionCookie(request));
        return reply.code(204).send();
      },
    );

    app.post(
      '/internal/auth/password',
      {
        config: { role: 'viewer' },
        schema: {
          body: PasswordBody,
          response: { 204: NoContent('Password changed; every other session of the user is revoked') },
        },
      },
      async (request, reply) => {
        const session = sessionOf(request);
        await s.signInLimiter.takeSignedIn(request, session.sessionId);
        await s.accounts.changePassword(
          callerOf(request),
          session.userId,
          request.body.current_password,
          request.body.new_password,
        );
        await s.sessions.revokeOthers(session.orgId, session.userId, session.sessionId);
        return reply.code(204).send();
      },
    );
  };
