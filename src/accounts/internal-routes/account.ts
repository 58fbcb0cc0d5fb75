import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf, sessionOf } from '../../http/plugins/internal-auth.js';
import { addressBucket } from '../../http/rate-limit/address-bucket.js';
import { takeToken } from '../../http/rate-limit/gate.js';
import { DataEnvelope, Id, NoContent, TimestampOut } from '../../http/schemas/common.js';
import { toWire } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { Email, GivenPassword, NewPassword } from './auth.js';
import { SessionSchema } from './session.js';

const EmailBody = Type.Object(
  { current_password: GivenPassword, new_email: Email },
  { additionalProperties: false },
);

const Token = Type.String({
  pattern: '^[A-Za-z0-9_-]{43}$',
  'x-message': 'must be the token of a password reset link',
});

const ResetBody = Type.Object(
  {
    token: Token,
    new_password: NewPassword,
  },
  { additionalProperties: false },
);

const IssuedReset = Type.Object({
  data: Type.Object({ email: Type.String(), expires_at: TimestampOut() }),
  token: Type.String(),
  url: Type.String(),
});

/** A person's own account (email) and admin-issued password reset links (docs/web-app.md "Accounts"). */
export const accountRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/internal/auth/email',
      {
        config: { role: 'viewer' },
        schema: { body: EmailBody, response: { 200: DataEnvelope(SessionSchema) } },
      },
      async (request) => {
        const session = sessionOf(request);
        await s.signInLimiter.takeSignedIn(request, session.sessionId);
        const user = await s.accounts.changeEmail(
          callerOf(request),
          session.userId,
          request.body.current_password,
          request.body.new_email,
        );
        return { data: s.sessions.view({ ...session, user: { ...session.user, email: user.email } }) };
      },
    );

    app.post(
      '/internal/members/:user_id/password-reset',
      {
        config: { role: 'admin' },
        schema: {
          params: Type.Object({ user_id: Id() }, { additionalProperties: false }),
          response: { 201: IssuedReset },
        },
      },
      async (request, reply) => {
        const issued = await s.passwordResets.issue(callerOf(request), request.params.user_id);
        reply.code(201);
        return {
          data: { email: issued.email, expires_at: toWire(issued.expiresAt) },
          token: issued.token,
          // The reset page (web: /reset-password), at the configured address, never the request's Host.
          url: s.publicAddress.link('/reset-password', issued.token),
        };
      },
    );

    app.post(
      '/internal/auth/password-reset',
      {
        config: { signedOut: true },
        schema: {
          body: ResetBody,
          response: { 204: NoContent('Password set; every session of the person has ended') },
        },
      },
      async (request, reply) => {
        // Each attempt costs an argon2 hash: bounded per client address like sign-ups.
        await takeToken(s.signUpLimiter, addressBucket(request.ip), request, reply, {
          headers: false,
          what: 'password resets per hour from one address',
        });
        await s.passwordResets.reset(request.body.token, request.body.new_password);
        return reply.code(204).send();
      },
    );
  };
