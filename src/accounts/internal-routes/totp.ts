import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf, sessionOf } from '../../http/plugins/internal-auth.js';
import { DataEnvelope, Id, NoContent, TimestampOut } from '../../http/schemas/common.js';
import { toWire } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { qrDataUrl } from '../totp-qr.js';
import type { TotpStatus } from '../totp-service.js';
import { GivenPassword, TotpCode } from './auth.js';

const Status = Type.Object({
  enabled: Type.Boolean(),
  enabled_at: Type.Union([TimestampOut(), Type.Null()]),
  /** The organization requires two-factor sign-in of every member. */
  required: Type.Boolean(),
  /** Unused recovery codes; 0 while it is off. */
  recovery_codes_left: Type.Integer({ minimum: 0 }),
});

/** Shown once: only their hashes are kept. */
const RecoveryCodes = Type.Array(Type.String(), { minItems: 1 });

const Confirmed = Type.Object({ ...Status.properties, recovery_codes: RecoveryCodes });

const Enrolment = Type.Object({
  /** Base32, for apps that take the secret typed in. */
  secret: Type.String(),
  /** `otpauth://totp/...`, what the QR code carries. */
  otpauth_uri: Type.String(),
  /** The QR code of `otpauth_uri`: an SVG image as a `data:` URL. */
  otpauth_qr: Type.String(),
});

const ConfirmBody = Type.Object({ code: TotpCode }, { additionalProperties: false });
const DisableBody = Type.Object(
  { current_password: GivenPassword, code: TotpCode },
  { additionalProperties: false },
);
const RegenerateBody = Type.Object({ code: TotpCode }, { additionalProperties: false });
const RequirementBody = Type.Object({ required: Type.Boolean() }, { additionalProperties: false });
const Requirement = Type.Object({ required: Type.Boolean() });

const statusOut = (status: TotpStatus) => ({
  enabled: status.enabled,
  enabled_at: status.enabledAt ? toWire(status.enabledAt) : null,
  required: status.required,
  recovery_codes_left: status.recoveryCodesLeft,
});

/**
 * Two-factor sign-in (docs/web-app.md "Accounts"): each person's enrolment and recovery
 * codes, the administrators' switch requiring it of every member, and their reset of a
 * member's. The person's own routes stay
 * reachable while their organization makes them enrol (`totpEnrolment`).
 */
export const totpRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/account/totp',
      {
        config: { role: 'viewer', totpEnrolment: true },
        schema: { response: { 200: DataEnvelope(Status) } },
      },
      async (request) => {
        const session = sessionOf(request);
        return { data: statusOut(await s.totp.status(session.orgId, session.userId)) };
      },
    );

    app.post(
      '/internal/account/totp/enrolment',
      {
        config: { role: 'viewer', totpEnrolment: true },
        schema: { response: { 201: DataEnvelope(Enrolment) } },
      },
      async (request, reply) => {
        const session = sessionOf(request);
        const enrolment = await s.totp.startEnrolment(callerOf(request), session.userId, session.user.email);
        reply.code(201);
        return {
          data: {
            secret: enrolment.secret,
            otpauth_uri: enrolment.uri,
            otpauth_qr: await qrDataUrl(enrolment.uri),
          },
        };
      },
    );

    app.post(
      '/internal/account/totp/confirm',
      {
        config: { role: 'viewer', totpEnrolment: true },
        schema: { body: ConfirmBody, response: { 200: DataEnvelope(Confirmed) } },
      },
      async (request) => {
        const session = sessionOf(request);
        // A guessed code is a guessed password: the same limit.
        await s.signInLimiter.takeSignedIn(request, session.sessionId);
        const codes = await s.totp.confirmEnrolment(callerOf(request), session.userId, request.body.code);
        // As after a password change: a session signed in with the password alone, perhaps by
        // whoever the second factor is meant to keep out, does not outlive it.
        await s.sessions.revokeOthers(session.orgId, session.userId, session.sessionId);
        const status = await s.totp.status(session.orgId, session.userId);
        return { data: { ...statusOut(status), recovery_codes: codes } };
      },
    );

    app.post(
      '/internal/account/totp/recovery-codes',
      {
        config: { role: 'viewer' },
        schema: {
          body: RegenerateBody,
          response: { 201: DataEnvelope(Type.Object({ recovery_codes: RecoveryCodes })) },
        },
      },
      async (request, reply) => {
        const session = sessionOf(request);
        await s.signInLimiter.takeSignedIn(request, session.sessionId);
        const codes = await s.totp.regenerateRecoveryCodes(
          callerOf(request),
          session.userId,
          request.body.code,
        );
        reply.code(201);
        return { data: { recovery_codes: codes } };
      },
    );

    app.post(
      '/internal/account/totp/disable',
      {
        config: { role: 'viewer' },
        schema: {
          body: DisableBody,
          response: { 204: NoContent('Two-factor sign-in is off; the password alone signs in') },
        },
      },
      async (request, reply) => {
        const session = sessionOf(request);
        await s.signInLimiter.takeSignedIn(request, session.sessionId);
        await s.totp.disable(
          callerOf(request),
          session.userId,
          request.body.current_password,
          request.body.code,
        );
        return reply.code(204).send();
      },
    );

    app.get(
      '/internal/members/two-factor',
      { config: { role: 'admin' }, schema: { response: { 200: DataEnvelope(Requirement) } } },
      async (request) => {
        const session = sessionOf(request);
        const status = await s.totp.status(session.orgId, session.userId);
        return { data: { required: status.required } };
      },
    );

    app.post(
      '/internal/members/two-factor',
      {
        config: { role: 'admin' },
        schema: { body: RequirementBody, response: { 200: DataEnvelope(Requirement) } },
      },
      async (request) => {
        await s.totp.setRequired(callerOf(request), request.body.required);
        return { data: { required: request.body.required } };
      },
    );

    app.delete(
      '/internal/members/:user_id/two-factor',
      {
        config: { role: 'admin' },
        schema: {
          params: Type.Object({ user_id: Id() }, { additionalProperties: false }),
          response: { 204: NoContent('Two-factor sign-in reset; every session of the member has ended') },
        },
      },
      async (request, reply) => {
        await s.totp.resetForMember(callerOf(request), request.params.user_id);
        return reply.code(204).send();
      },
    );
  };
