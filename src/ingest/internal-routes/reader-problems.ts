import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import { Id, Nullable, TimestampOut } from '../../http/schemas/common.js';
import { toWire } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';
import { readerProblems } from '../reader-problems.js';

const ReaderParams = Type.Object({ reader_id: Id() });

const ProblemSchema = Type.Object({
  received_at: TimestampOut(),
  bad_reads: Type.Integer(),
  unknown_reads: Type.Integer(),
  errors: Type.Array(Type.String(), {
    description: 'Why reads were refused: the first 100 of a message, then a line counting the rest',
  }),
  payload: Type.String({
    description: 'The message as received (first 2,000 characters): the unknown tags are in it',
  }),
  payload_truncated: Type.Boolean(),
});

const UnknownTagSchema = Type.Object({
  tag_type: Type.String(),
  value: Type.String({ description: 'As the reader reported it (normalised like every read)' }),
  antenna: Nullable(Type.Integer()),
  // Last seen: the reader's time when trusted, else the receipt (as the ingest places reads).
  seen_at: TimestampOut(),
  reads: Type.Integer({ description: 'Reads of it in the messages looked at' }),
});

const ReadErrorSchema = Type.Object({
  received_at: TimestampOut(),
  message: Type.String(),
});

const ProblemsEnvelope = Type.Object({
  data: Type.Array(ProblemSchema),
  last_problem_at: Nullable(TimestampOut()),
  unknown_tags: Type.Array(UnknownTagSchema, {
    description:
      'Tags of those messages that match no asset now, newest first, one entry per tag (at most 20)',
  }),
  read_errors: Type.Array(ReadErrorSchema, {
    description: 'The refused reads of those messages with their error, newest first (at most 20)',
  }),
});

/** What went wrong with a reader's reads lately (docs/web-app.md "Readers"). */
export const readerProblemRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/readers/:reader_id/problems',
      { config: { role: 'viewer' }, schema: { params: ReaderParams, response: { 200: ProblemsEnvelope } } },
      async (request) => {
        const { orgId } = sessionOf(request);
        const p = await s.db.readWithOrg(orgId, (tx) => readerProblems(tx, orgId, request.params.reader_id));
        return {
          data: p.messages.map((m) => ({
            received_at: toWire(m.receivedAt),
            bad_reads: m.badReads,
            unknown_reads: m.unknownReads,
            errors: m.errors,
            payload: m.payload,
            payload_truncated: m.payloadTruncated,
          })),
          last_problem_at: p.messages[0] ? toWire(p.messages[0].receivedAt) : null,
          unknown_tags: p.unknownTags.map((t) => ({
            tag_type: t.tagType,
            value: t.value,
            antenna: t.antenna,
            seen_at: toWire(new Date(t.seenAt)),
            reads: t.reads,
          })),
          read_errors: p.errors.map((e) => ({ received_at: toWire(e.receivedAt), message: e.message })),
        };
      },
    );
  };
