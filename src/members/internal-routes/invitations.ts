import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Email } from '../../accounts/internal-routes/auth.js';
import { SessionSchema } from '../../accounts/internal-routes/session.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../accounts/passwords.js';
import { callerOf, sessionOf, setDeviceCookie, setSessionCookie } from '../../http/plugins/internal-auth.js';
import { addressBucket } from '../../http/rate-limit/address-bucket.js';
import { takeToken } from '../../http/rate-limit/gate.js';
import {
  DataEnvelope,
  Id,
  ListEnvelope,
  NoContent,
  Nullable,
  TimestampOut,
} from '../../http/schemas/common.js';
import { PageOnlyQuery } from '../../http/schemas/internal.js';
import { toWire } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { listEnvelope, pageOf } from '../../master-data/list-query.js';
import type { Invitation, IssuedInvitation } from '../invitations.js';
import { RoleSchema } from './members.js';

/** `Invitation` of docs/web-app.md. */
const InvitationSchema = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  role: RoleSchema,
  invited_by: Nullable(Type.String()),
  created_at: TimestampOut(),
  sent_at: TimestampOut(),
  expires_at: TimestampOut(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('expired')]),
});

/**
 * An invitation as minted or resent: the link, shown once, for the admin to pass on; and
 * whether it was also mailed (TAGTRAIL_SMTP_URL), with the reason when sending failed.
 */
const Issued = Type.Object({
  data: InvitationSchema,
  token: Type.String(),
  url: Type.String(),
  emailed: Type.Boolean(),
  email_error: Type.Optional(Type.String()),
});

/** 32 random bytes, base64url. */
const Token = Type.String({
  pattern: '^[A-Za-z0-9_-]{43}$',
  'x-message': 'must be the token of an invitation link',
});

const InvitationParams = Type.Object({ invitation_id: Id() });

const AcceptBody = Type.Object(
  { token: Token, password: Type.String({ minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH }) },
  { additionalProperties: false },
);

const InvitationPreview = Type.Object({
  email: Type.String(),
  role: RoleSchema,
  organization: Type.Object({ id: Type.Integer(), name: Type.String() }),
  expires_at: TimestampOut(),
});

/** Invitations: admins invite, list, resend and revoke; the link's holder looks and accepts. */
export const invitationRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    const view = (i: Invitation) => ({
      id: i.id,
      email: i.email,
      role: i.role,
      invited_by: i.invitedBy,
      created_at: toWire(i.createdAt),
      sent_at: toWire(i.sentAt),
      expires_at: toWire(i.expiresAt),
      status: s.invitations.isExpired(i) ? ('expired' as const) : ('pending' as const),
    });
    const issued = async (request: FastifyRequest, { invitation, token }: IssuedInvitation) => {
      // The page that accepts a link (web: /invitation); never built from the request's Host.
      const url = s.publicAddress.link('/invitation', token);
      const session = sessionOf(request);
      const mail = s.invitationMailer
        ? await s.invitationMailer.send({
            to: invitation.email,
            organization: session.organization.name,
            role: invitation.role,
            invitedBy: session.user.email,
            url,
            expiresAt: invitation.expiresAt,
          })
        : null;
      return {
        data: view(invitation),
        token,
        url,
        emailed: mail?.sent === true,
        ...(mail && !mail.sent ? { email_error: mail.error } : {}),
      };
    };

    const spendInvitation = (request: FastifyRequest, reply: FastifyReply) =>
      takeToken(s.invitationLimiter, `org:${sessionOf(request).orgId}`, request, reply, {
        headers: false,
        what: 'invitations per hour from one organization',
      });

    app.get(
      '/internal/invitations',
      {
        config: { role: 'admin' },
        schema: {
          querystring: PageOnlyQuery,
          response: { 200: ListEnvelope(InvitationSchema) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const page = pageOf(request.query);
        const { rows, total } = await s.invitations.list(orgId, page);
        return listEnvelope(rows.map(view), page, total);
      },
    );

    app.post(
      '/internal/invitations',
      {
        config: { role: 'admin' },
        schema: {
          body: Type.Object({ email: Email, role: RoleSchema }, { additionalProperties: false }),
          response: { 201: Issued },
        },
      },
      async (request, reply) => {
        const session = sessionOf(request);
        // Before the address is looked up: a refused invitation answers nothing about it.
        await spendInvitation(request, reply);
        const minted = await s.invitations.invite(
          callerOf(request),
          session.userId,
          request.body.email,
          request.body.role,
        );
        reply.code(201);
        return issued(request, minted);
      },
    );

    app.post(
      '/internal/invitations/:invitation_id/resend',
      { config: { role: 'admin' }, schema: { params: InvitationParams, response: { 200: Issued } } },
      async (request, reply) => {
        await spendInvitation(request, reply);
        return issued(request, await s.invitations.resend(callerOf(request), request.params.invitation_id));
      },
    );

    app.delete(
      '/internal/invitations/:invitation_id',
      {
        config: { role: 'admin' },
        schema: {
          params: InvitationParams,
          response: { 204: NoContent('Revoked; the link no longer works') },
        },
      },
      async (request, reply) => {
        await s.invitations.revoke(callerOf(request), request.params.invitation_id);
        return reply.code(204).send();
      },
    );

    // POST, not GET with the token in the query: the token stays out of URLs and logs.
    app.post(
      '/internal/invitations/lookup',
      {
        config: { signedOut: true },
        schema: {
          body: Type.Object({ token: Token }, { additionalProperties: false }),
          response: { 200: DataEnvelope(InvitationPreview) },
        },
      },
      async (request) => {
        const i = await s.invitations.lookup(request.body.token);
        return {
          data: {
            email: i.email,
            role: i.role,
            organization: { id: i.orgId, name: i.organizationName },
            expires_at: toWire(i.expiresAt),
          },
        };
      },
    );

    app.post(
      '/internal/invitations/accept',
      {
        config: { signedOut: true },
        schema: { body: AcceptBody, response: { 201: DataEnvelope(SessionSchema) } },
      },
      async (request, reply) => {
        // Accepting makes an account and hashes a password, as a sign-up does: same budget.
        await takeToken(s.signUpLimiter, addressBucket(request.ip), request, reply, {
          headers: false,
          what: 'sign-ups per hour from one address',
        });
        const { user } = await s.invitations.accept(request.body.token, request.body.password);
        const created = await s.sessions.create(user.orgId, user.id);
        const session = await s.sessions.authenticate(created.token);
        if (!session) throw new Error('a session just created did not authenticate');
        setSessionCookie(request, reply, created);
        setDeviceCookie(request, reply, s.deviceCookies.issue(user.email));
        reply.code(201);
        return { data: s.sessions.view(session) };
      },
    );
  };
