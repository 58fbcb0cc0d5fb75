import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Database } from '../../db/pool.js';
import { notFound } from '../../errors.js';
import { callerOf, sessionOf } from '../../http/plugins/internal-auth.js';
import {
  DataEnvelope,
  Id,
  ListEnvelope,
  NoContent,
  Nullable,
  TimestampOut,
} from '../../http/schemas/common.js';
import { PageOnlyQuery } from '../../http/schemas/internal.js';
import { toWire, toWireOrNull } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { listEnvelope, pageOf, slicePage } from '../../master-data/list-query.js';
import { READER_FAMILIES } from '../adapters/types.js';
import { readerUsername } from '../mqtt-credentials.js';
import { perMinute } from '../reader-counters.js';
import type { Reader, ScanPoint } from '../readers-service.js';

/** `ScanPoint` of docs/web-app.md: the location named as well as identified. */
export const ScanPointSchema = Type.Object({
  id: Type.Integer(),
  antenna: Nullable(Type.Integer()),
  location_id: Type.Integer(),
  location_external_key: Nullable(Type.String()),
  location_name: Nullable(Type.String()),
});

/** How a reader is doing now (docs/metrics.md, "Per-reader health"). */
export const ReaderHealthSchema = Type.Object({
  connected: Nullable(
    Type.Boolean({
      description:
        'Logged in to the embedded MQTT broker now; null with an external broker, which the service cannot see',
    }),
  ),
  reads_per_minute: Type.Number({
    description: 'Reads received in the last 60 seconds (estimated from minute buckets)',
  }),
  errors_per_minute: Type.Number({ description: 'Refused (bad) reads in the last 60 seconds' }),
  last_error_at: Nullable(TimestampOut()),
});

export const ReaderSchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  family: Type.String(),
  identity: Type.String(),
  topic: Type.String(),
  webhook: Type.Boolean(),
  /** Its user name on the MQTT broker (`reader-<id>`). */
  mqtt_username: Type.String(),
  /** Whether it has MQTT credentials (false once revoked). */
  mqtt_credentials: Type.Boolean(),
  created_at: TimestampOut(),
  last_message_at: Nullable(TimestampOut()),
  good_reads: Type.Integer(),
  bad_reads: Type.Integer(),
  unknown_reads: Type.Integer(),
  health: ReaderHealthSchema,
  scan_points: Type.Array(ScanPointSchema),
});

type LocationLabel = { external_key: string; name: string };

/** Keys and names of the locations the scan points map to (deleted ones too: the point still names them). */
async function locationLabels(db: Database, orgId: number, points: ScanPoint[]) {
  const ids = [...new Set(points.map((p) => p.locationId))];
  if (ids.length === 0) return new Map<number, LocationLabel>();
  const { rows } = await db.readWithOrg(orgId, (tx) =>
    tx.query<LocationLabel & { id: number }>(
      'SELECT id, external_key, name FROM locations WHERE org_id = $1 AND id = ANY($2::bigint[])',
      [orgId, ids],
    ),
  );
  return new Map(rows.map((r) => [r.id, { external_key: r.external_key, name: r.name }]));
}

function scanPointView(p: ScanPoint, labels: Map<number, LocationLabel>) {
  const label = labels.get(p.locationId);
  return {
    id: p.id,
    antenna: p.antenna,
    location_id: p.locationId,
    location_external_key: label?.external_key ?? null,
    location_name: label?.name ?? null,
  };
}

/** What readerView needs besides the reader: the time, and who is connected (null: unknown). */
interface HealthContext {
  now: number;
  connected: ReadonlySet<number> | null;
}

const healthContext = (s: InternalServices): HealthContext => ({
  now: Date.now(),
  connected: s.readerPresence?.connectedReaders() ?? null,
});

function healthView(r: Reader, context: HealthContext) {
  const rates = perMinute(r.rates, context.now);
  return {
    connected: context.connected ? context.connected.has(r.id) : null,
    reads_per_minute: rates.reads,
    errors_per_minute: rates.errors,
    last_error_at: toWireOrNull(r.lastErrorAt),
  };
}

function readerView(r: Reader, labels: Map<number, LocationLabel>, context: HealthContext) {
  return {
    id: r.id,
    name: r.name,
    family: r.family,
    identity: r.identity,
    topic: r.topic,
    webhook: r.webhook,
    mqtt_username: readerUsername(r.id),
    mqtt_credentials: r.mqtt,
    created_at: toWire(r.createdAt),
    last_message_at: toWireOrNull(r.lastMessageAt),
    good_reads: r.goodReads,
    bad_reads: r.badReads,
    unknown_reads: r.unknownReads,
    health: healthView(r, context),
    scan_points: r.scanPoints.map((p) => scanPointView(p, labels)),
  };
}

const CreateReaderBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    family: Type.Unsafe<string>({ type: 'string', enum: [...READER_FAMILIES] }),
    identity: Type.String({ minLength: 1, maxLength: 255 }),
    topic: Type.String({ minLength: 1, maxLength: 512 }),
    webhook: Type.Boolean(),
  },
  { additionalProperties: false },
);

/** A reader's edit: create's fields, each optional (absent ones are kept). */
const UpdateReaderBody = Type.Partial(CreateReaderBody, { additionalProperties: false });

const CreateScanPointBody = Type.Object(
  {
    antenna: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 65535 }))),
    location_id: Id(),
  },
  { additionalProperties: false },
);

/** A scan point's edit: another antenna (null: every other one) or location. */
const UpdateScanPointBody = Type.Partial(CreateScanPointBody, { additionalProperties: false });

const ReaderParams = Type.Object({ reader_id: Id() });
const ScanPointParams = Type.Object({ reader_id: Id(), scan_point_id: Id() });

/** Readers and their scan points, through the readers service (src/ingest/readers-service.ts). */
export const readerRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/readers',
      {
        config: { role: 'viewer' },
        schema: {
          querystring: PageOnlyQuery,
          response: { 200: ListEnvelope(ReaderSchema) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const page = pageOf(request.query);
        const { rows, total } = slicePage(await s.readers.list(orgId), page);
        const context = healthContext(s);
        const labels = await locationLabels(
          s.db,
          orgId,
          rows.flatMap((r) => r.scanPoints),
        );
        return listEnvelope(
          rows.map((r) => readerView(r, labels, context)),
          page,
          total,
        );
      },
    );

    app.post(
      '/internal/readers',
      {
        config: { role: 'admin' },
        schema: {
          body: CreateReaderBody,
          response: {
            201: Type.Object({
              data: ReaderSchema,
              webhook_secret: Type.Optional(Type.String()),
              // Shown once: only its hash is stored.
              mqtt_password: Type.String(),
            }),
          },
        },
      },
      async (request, reply) => {
        const created = await s.readers.create(callerOf(request), request.body);
        reply.code(201);
        return {
          data: readerView(created.reader, new Map(), healthContext(s)),
          ...(created.webhookSecret === null ? {} : { webhook_secret: created.webhookSecret }),
          mqtt_password: created.mqtt.password,
        };
      },
    );

    app.patch(
      '/internal/readers/:reader_id',
      {
        config: { role: 'admin' },
        schema: {
          params: ReaderParams,
          body: UpdateReaderBody,
          response: {
            200: Type.Object({
              data: ReaderSchema,
              // Only when `webhook: true` issued one; shown once.
              webhook_secret: Type.Optional(Type.String()),
            }),
          },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const updated = await s.readers.update(orgId, request.params.reader_id, request.body);
        const labels = await locationLabels(s.db, orgId, updated.reader.scanPoints);
        return {
          data: readerView(updated.reader, labels, healthContext(s)),
          ...(updated.webhookSecret === null ? {} : { webhook_secret: updated.webhookSecret }),
        };
      },
    );

    app.delete(
      '/internal/readers/:reader_id',
      {
        config: { role: 'admin' },
        schema: { params: ReaderParams, response: { 204: NoContent('Reader deleted') } },
      },
      async (request, reply) => {
        await s.readers.delete(callerOf(request), request.params.reader_id);
        return reply.code(204).send();
      },
    );

    app.post(
      '/internal/readers/:reader_id/mqtt-credentials',
      {
        config: { role: 'admin' },
        schema: {
          params: ReaderParams,
          response: { 200: Type.Object({ data: ReaderSchema, mqtt_password: Type.String() }) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        // New credentials replace the old ones; the reader's live connection is closed.
        const rotated = await s.readers.rotateMqttCredentials(callerOf(request), request.params.reader_id);
        const labels = await locationLabels(s.db, orgId, rotated.reader.scanPoints);
        return {
          data: readerView(rotated.reader, labels, healthContext(s)),
          mqtt_password: rotated.mqtt.password,
        };
      },
    );

    app.delete(
      '/internal/readers/:reader_id/mqtt-credentials',
      {
        config: { role: 'admin' },
        schema: { params: ReaderParams, response: { 204: NoContent('MQTT credentials revoked') } },
      },
      async (request, reply) => {
        await s.readers.revokeMqttCredentials(callerOf(request), request.params.reader_id);
        return reply.code(204).send();
      },
    );

    app.post(
      '/internal/readers/:reader_id/scan-points',
      {
        config: { role: 'admin' },
        schema: {
          params: ReaderParams,
          body: CreateScanPointBody,
          response: { 201: DataEnvelope(ScanPointSchema) },
        },
      },
      async (request, reply) => {
        const { orgId } = sessionOf(request);
        const point = await s.readers.addScanPoint(callerOf(request), request.params.reader_id, {
          locationId: request.body.location_id,
          antenna: request.body.antenna ?? null,
        });
        reply.code(201);
        return { data: scanPointView(point, await locationLabels(s.db, orgId, [point])) };
      },
    );

    app.patch(
      '/internal/readers/:reader_id/scan-points/:scan_point_id',
      {
        config: { role: 'admin' },
        schema: {
          params: ScanPointParams,
          body: UpdateScanPointBody,
          response: { 200: DataEnvelope(ScanPointSchema) },
        },
      },
      async (request) => {
        const { orgId } = sessionOf(request);
        const { reader_id, scan_point_id } = request.params;
        const point = await s.readers.updateScanPoint(orgId, reader_id, scan_point_id, {
          locationId: request.body.location_id,
          antenna: request.body.antenna,
        });
        return { data: scanPointView(point, await locationLabels(s.db, orgId, [point])) };
      },
    );

    app.delete(
      '/internal/readers/:reader_id/scan-points/:scan_point_id',
      {
        config: { role: 'admin' },
        schema: { params: ScanPointParams, response: { 204: NoContent('Scan point removed') } },
      },
      async (request, reply) => {
        const { orgId } = sessionOf(request);
        const { reader_id, scan_point_id } = request.params;
        // The service removes a point by (reader, antenna); the page names it by id.
        const reader = await s.readers.get(orgId, reader_id);
        const point = reader.scanPoints.find((p) => p.id === scan_point_id);
        if (!point) throw notFound('scan point');
        await s.readers.removeScanPoint(callerOf(request), reader_id, point.antenna);
        return reply.code(204).send();
      },
    );
  };
