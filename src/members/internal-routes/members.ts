import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { callerOf, clearedSessionCookie, sessionOf } from '../../http/plugins/internal-auth.js';
import { DataEnvelope, Id, ListEnvelope, NoContent, TimestampOut } from '../../http/schemas/common.js';
import { PageOnlyQuery } from '../../http/schemas/internal.js';
import { toWire } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { listEnvelope, pageOf } from '../../master-data/list-query.js';
import type { Member } from '../service.js';

export const RoleSchema = Type.Union([Type.Literal('viewer'), Type.Literal('editor'), Type.Literal('admin')]);

/** `Member` of docs/web-app.md. */
const MemberSchema = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  role: RoleSchema,
  created_at: TimestampOut(),
  /** Has two-factor sign-in on (an admin can reset it). */
  two_factor: Type.Boolean(),
});

const memberView = (m: Member) => ({
  id: m.id,
  email: m.email,
  role: m.role,
  created_at: toWire(m.createdAt),
  two_factor: m.twoFactor,
});

const MemberParams = Type.Object({ user_id: Id() });

/** The organization's people: list, change a role, remove (admins only). */
export const memberRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/members',
      {
        config: { role: 'admin' },
        schema: {
          querystring: PageOnlyQuery,
          response: { 200: ListEnvelope(MemberSchema) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const page = pageOf(request.query);
        const { rows, total } = await s.members.list(orgId, page);
        return listEnvelope(rows.map(memberView), page, total);
      },
    );

    app.post(
      '/internal/members/:user_id/role',
      {
        config: { role: 'admin' },
        schema: {
          params: MemberParams,
          body: Type.Object({ role: RoleSchema }, { additionalProperties: false }),
          response: { 200: DataEnvelope(MemberSchema) },
        },
      },
      async (request) => {
        return {
          data: memberView(
            await s.members.setRole(callerOf(request), request.params.user_id, request.body.role),
          ),
        };
      },
    );

    app.delete(
      '/internal/members/:user_id',
      {
        config: { role: 'admin' },
        schema: {
          params: MemberParams,
          response: { 204: NoContent('Removed; every session of theirs has ended') },
        },
      },
      async (request, reply) => {
        const session = sessionOf(request);
        await s.members.remove(callerOf(request), request.params.user_id);
        // An admin removing themselves is signed out like anybody removed.
        if (request.params.user_id === session.userId)
          reply.header('set-cookie', clearedSessionCookie(request));
        return reply.code(204).send();
      },
    );
  };
