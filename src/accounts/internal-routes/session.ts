import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import { DataEnvelope, TimestampOut } from '../../http/schemas/common.js';
import type { InternalServices } from '../../internal-services.js';

/** `Session` of docs/web-app.md. */
export const SessionSchema = Type.Object({
  user: Type.Object({
    id: Type.Integer(),
    email: Type.String(),
    role: Type.Union([Type.Literal('admin'), Type.Literal('editor'), Type.Literal('viewer')]),
  }),
  organization: Type.Object({ id: Type.Integer(), name: Type.String() }),
  csrf_token: Type.String(),
  expires_at: TimestampOut(),
  /** The organization requires two-factor sign-in and this person must set it up first. */
  totp_enrolment_required: Type.Boolean(),
});

export const sessionRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/session',
      {
        config: { role: 'viewer', totpEnrolment: true },
        schema: { response: { 200: DataEnvelope(SessionSchema) } },
      },
      async (request) => ({ data: s.sessions.view(sessionOf(request)) }),
    );
  };
