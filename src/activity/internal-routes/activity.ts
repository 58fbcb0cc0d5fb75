import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { fieldError } from '../../errors.js';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import {
  DataEnvelope,
  ListEnvelope,
  Nullable,
  PageQuery,
  TimestampIn,
  TimestampOut,
} from '../../http/schemas/common.js';
import { parseRfc3339 } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { listEnvelope } from '../../master-data/list-query.js';
import { activityView } from '../export.js';
import { ACTOR_TYPES, type ActivityFilter, ENTITY_TYPES } from '../repository.js';

const Enum = <T extends string>(values: readonly T[]) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values] });

const Actor = Type.Object({
  type: Enum(ACTOR_TYPES),
  id: Nullable(Type.String()),
  name: Nullable(Type.String()),
});

/** `ActivityEntry` of docs/web-app.md. */
export const ActivityEntrySchema = Type.Object({
  id: Type.Integer(),
  occurred_at: TimestampOut(),
  actor: Actor,
  entity_type: Type.String(),
  entity_id: Type.String(),
  action: Enum(['created', 'updated', 'deleted'] as const),
  record_type: Type.String(),
  record_id: Type.String(),
  before: Nullable(Type.Object({}, { additionalProperties: true })),
  after: Nullable(Type.Object({}, { additionalProperties: true })),
});

const ActivityQuery = Type.Object(
  {
    ...PageQuery,
    entity_type: Type.Optional(Enum(ENTITY_TYPES)),
    record_type: Type.Optional(Enum(ENTITY_TYPES)),
    record_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    actor_type: Type.Optional(Enum(ACTOR_TYPES)),
    actor_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    since: Type.Optional(TimestampIn()),
    until: Type.Optional(TimestampIn()),
  },
  { additionalProperties: false },
);

type Query = typeof ActivityQuery.static;

function toFilter(q: Query): ActivityFilter {
  const together = (a: keyof Query, b: keyof Query) => {
    if ((q[a] === undefined) !== (q[b] === undefined)) {
      const missing = q[a] === undefined ? a : b;
      throw fieldError(missing, 'required', `${missing} is required together with ${missing === a ? b : a}`);
    }
  };
  together('record_type', 'record_id');
  if (q.actor_id !== undefined && q.actor_type === undefined) {
    throw fieldError('actor_type', 'required', 'actor_type is required together with actor_id');
  }
  const since = q.since === undefined ? undefined : new Date(parseRfc3339(q.since)!);
  const until = q.until === undefined ? undefined : new Date(parseRfc3339(q.until)!);
  if (since && until && until <= since)
    throw fieldError('until', 'invalid_value', 'until must be later than since');
  return {
    entityType: q.entity_type,
    record: q.record_type && q.record_id ? { type: q.record_type, id: q.record_id } : undefined,
    actor: q.actor_type ? { type: q.actor_type, id: q.actor_id } : undefined,
    since,
    until,
  };
}

/** The activity log, for the organization's page and a record's page (docs/web-app.md). */
export const activityRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/activity',
      {
        config: { role: 'viewer' },
        schema: { querystring: ActivityQuery, response: { 200: ListEnvelope(ActivityEntrySchema) } },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const page = { limit: request.query.limit, offset: request.query.offset };
        const { rows, total } = await s.activity.list(orgId, toFilter(request.query), page);
        return listEnvelope(rows.map(activityView), page, total);
      },
    );

    app.get(
      '/internal/activity/actors',
      { config: { role: 'viewer' }, schema: { response: { 200: DataEnvelope(Type.Array(Actor)) } } },
      async (request) => {
        const rows = await s.activity.actors(sessionOf(request).orgId);
        return { data: rows.map((r) => ({ type: r.actor_type, id: r.actor_id, name: r.actor_name })) };
      },
    );
  };
