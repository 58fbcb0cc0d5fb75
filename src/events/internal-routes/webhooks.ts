import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import {
  DataEnvelope,
  Id,
  ListEnvelope,
  NoContent,
  Nullable,
  TimestampOut,
} from '../../http/schemas/common.js';
import { PageOnlyQuery } from '../../http/schemas/internal.js';
import type { InternalServices } from '../../internal-services.js';
import { listEnvelope, pageOf, slicePage } from '../../master-data/list-query.js';
import { EVENT_TYPES, type EventType } from '../outbox.js';

const EventTypeSchema = Type.Unsafe<EventType>({ type: 'string', enum: [...EVENT_TYPES] });

export const WebhookEndpointSchema = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  event_types: Type.Array(EventTypeSchema),
  location_id: Nullable(Type.Integer()),
  enabled: Type.Boolean(),
  disabled_at: Nullable(TimestampOut()),
  /** Why it was disabled automatically (null when an administrator disabled it). */
  disabled_reason: Nullable(Type.String()),
  failing_since: Nullable(TimestampOut()),
  created_at: TimestampOut(),
  pending_deliveries: Type.Integer(),
});

export const WebhookDeliverySchema = Type.Object({
  id: Type.Integer(),
  event_id: Type.String(),
  event_type: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  created_at: TimestampOut(),
  last_attempt_at: Nullable(TimestampOut()),
  last_status: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  last_duration_ms: Nullable(Type.Integer()),
  next_attempt_at: Nullable(TimestampOut()),
  delivered_at: Nullable(TimestampOut()),
});

const EndpointFields = {
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  event_types: Type.Array(EventTypeSchema, { minItems: 1, maxItems: EVENT_TYPES.length * 2 }),
  location_id: Type.Optional(Nullable(Id('Only events concerning this location or one below it'))),
  enabled: Type.Optional(Type.Boolean()),
};

const CreateBody = Type.Object(EndpointFields, { additionalProperties: false });
const UpdateBody = Type.Object(
  {
    url: Type.Optional(EndpointFields.url),
    event_types: Type.Optional(EndpointFields.event_types),
    location_id: EndpointFields.location_id,
    enabled: EndpointFields.enabled,
  },
  { additionalProperties: false },
);
const EndpointParams = Type.Object({ webhook_id: Id() });
const DeliveryParams = Type.Object({ webhook_id: Id(), delivery_id: Id() });

/** Webhook endpoints (docs/events.md): administrators only, like API keys. */
export const webhookRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/webhooks',
      {
        config: { role: 'admin' },
        schema: {
          querystring: PageOnlyQuery,
          response: { 200: ListEnvelope(WebhookEndpointSchema) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const page = pageOf(request.query);
        const { rows, total } = slicePage(await s.webhooks.list(orgId), page);
        return listEnvelope(rows, page, total);
      },
    );

    app.post(
      '/internal/webhooks',
      {
        config: { role: 'admin' },
        schema: {
          body: CreateBody,
          // The signing secret is shown once, here.
          response: { 201: Type.Object({ data: WebhookEndpointSchema, secret: Type.String() }) },
        },
      },
      async (request, reply) => {
        const { orgId } = sessionOf(request);
        const created = await s.webhooks.create(orgId, request.body);
        reply.code(201);
        return { data: created.endpoint, secret: created.secret };
      },
    );

    app.patch(
      '/internal/webhooks/:webhook_id',
      {
        config: { role: 'admin' },
        schema: {
          params: EndpointParams,
          body: UpdateBody,
          response: { 200: DataEnvelope(WebhookEndpointSchema) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        return { data: await s.webhooks.update(orgId, request.params.webhook_id, request.body) };
      },
    );

    app.delete(
      '/internal/webhooks/:webhook_id',
      {
        config: { role: 'admin' },
        schema: { params: EndpointParams, response: { 204: NoContent('Webhook endpoint deleted') } },
      },
      async (request, reply) => {
        const { orgId } = sessionOf(request);
        await s.webhooks.remove(orgId, request.params.webhook_id);
        return reply.code(204).send();
      },
    );

    app.get(
      '/internal/webhooks/:webhook_id/deliveries',
      {
        config: { role: 'admin' },
        schema: {
          params: EndpointParams,
          querystring: PageOnlyQuery,
          response: { 200: ListEnvelope(WebhookDeliverySchema) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const page = pageOf(request.query);
        const { rows, total } = await s.webhooks.deliveries(orgId, request.params.webhook_id, page);
        return listEnvelope(rows, page, total);
      },
    );

    app.post(
      '/internal/webhooks/:webhook_id/deliveries/:delivery_id/redeliver',
      {
        config: { role: 'admin' },
        schema: { params: DeliveryParams, response: { 200: DataEnvelope(WebhookDeliverySchema) } },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const { webhook_id, delivery_id } = request.params;
        return { data: await s.webhooks.redeliver(orgId, webhook_id, delivery_id) };
      },
    );
  };
