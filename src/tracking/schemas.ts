import { Type } from '@sinclair/typebox';
import { ExternalKey, Id, Nullable, PageQuery, TimestampIn, TimestampOut } from '../http/schemas/common.js';

export const HistoryRowSchema = Type.Object(
  {
    event_observed_at: TimestampOut(),
    location_id: Nullable(Type.Integer({ format: 'int64' })),
    location_external_key: Nullable(
      Type.String({ description: "null when the location's window has elapsed" }),
    ),
    duration_seconds: Type.Number({
      description:
        'Seconds from this arrival to the next one; for the current stay, from arrival to the last sighting so far.',
    }),
  },
  { $id: 'AssetHistoryRow' },
);

export const HistoryQuery = Type.Object(
  {
    ...PageQuery,
    from: Type.Optional(TimestampIn()),
    to: Type.Optional(TimestampIn()),
    sort: Type.Optional(
      Type.String({ description: 'event_observed_at or -event_observed_at (default -event_observed_at)' }),
    ),
  },
  { additionalProperties: false },
);

export const ReportRowSchema = Type.Object(
  {
    asset_id: Type.Integer({ format: 'int64' }),
    asset_external_key: Type.String(),
    asset_last_seen: TimestampOut(),
    asset_deleted_at: Nullable(TimestampOut()),
    location_id: Nullable(Type.Integer({ format: 'int64' })),
    location_external_key: Nullable(Type.String()),
  },
  { $id: 'AssetLocationReportRow' },
);

const Q = Type.String({
  pattern: '^[^\\x00-\\x1F\\x7F]*$',
  'x-message': 'must not contain control characters',
  maxLength: 255,
});

export const ReportQuery = Type.Object(
  {
    ...PageQuery,
    location_id: Type.Optional(Type.Array(Id())),
    location_external_key: Type.Optional(Type.Array(ExternalKey())),
    asset_id: Type.Optional(Type.Array(Id())),
    asset_external_key: Type.Optional(Type.Array(ExternalKey())),
    q: Type.Optional(Q),
    include_deleted: Type.Optional(Type.Boolean({ default: false })),
    sort: Type.Optional(
      Type.String({
        description:
          'Comma-separated: asset_last_seen, asset_external_key, location_external_key, each optionally prefixed -; default -asset_last_seen',
      }),
    ),
  },
  { additionalProperties: false },
);
