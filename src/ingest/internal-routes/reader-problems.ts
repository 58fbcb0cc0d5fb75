import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Tx } from '../../db/pool.js';
import { notFound } from '../../errors.js';
import { sessionOf } from '../../http/plugins/internal-auth.js';
import { Id, Nullable, TimestampOut } from '../../http/schemas/common.js';
import { toWire } from '../../http/timestamps.js';
import type { InternalServices } from '../../internal-services.js';

/** Messages shown per reader, and how many of the organization's latest messages are looked through. */
export const PROBLEMS_SHOWN = 10;
const MESSAGES_SCANNED = 10_000;
/** Enough of a payload to read the tag values in it, not a whole batch. */
const PAYLOAD_SHOWN = 2000;

const ReaderParams = Type.Object({ reader_id: Id() });

const ProblemSchema = Type.Object({
  received_at: TimestampOut(),
  bad_reads: Type.Integer(),
  unknown_reads: Type.Integer(),
  errors: Type.Array(Type.String(), { description: 'Why reads were refused (at most 100 per message)' }),
  payload: Type.String({
    description: 'The message as received (first 2,000 characters): the unknown tags are in it',
  }),
  payload_truncated: Type.Boolean(),
});

const ProblemsEnvelope = Type.Object({
  data: Type.Array(ProblemSchema),
  last_problem_at: Nullable(TimestampOut()),
});

interface ProblemRow {
  received_at: Date;
  bad_reads: number;
  unknown_reads: number;
  errors: string[] | null;
  payload: string;
  payload_length: number;
}

/**
 * The reader's latest messages with bad reads or unknown tags, newest first, taken from the
 * raw messages the ingest keeps anyway. Bounded: only the organization's latest
 * MESSAGES_SCANNED messages are looked through (the index is by organization and time).
 */
async function latestProblems(tx: Tx, orgId: number, readerId: number): Promise<ProblemRow[]> {
  const reader = await tx.query('SELECT 1 FROM readers WHERE org_id = $1 AND id = $2', [orgId, readerId]);
  if (!reader.rowCount) throw notFound('reader');
  const { rows } = await tx.query<ProblemRow>(
    `SELECT received_at, bad_reads, unknown_reads, errors, left(payload, $4) AS payload,
       length(payload) AS payload_length
     FROM (SELECT * FROM raw_messages WHERE org_id = $1 ORDER BY received_at DESC LIMIT $5) m
     WHERE reader_id = $2 AND (bad_reads > 0 OR unknown_reads > 0)
     ORDER BY received_at DESC LIMIT $3`,
    [orgId, readerId, PROBLEMS_SHOWN, PAYLOAD_SHOWN, MESSAGES_SCANNED],
  );
  return rows;
}

/** What went wrong with a reader's reads lately (docs/web-app.md "Readers"). */
export const readerProblemRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/internal/readers/:reader_id/problems',
      { schema: { params: ReaderParams, response: { 200: ProblemsEnvelope } } },
      async (request) => {
        const { orgId } = sessionOf(request);
        const rows = await s.db.withOrg(orgId, (tx) => latestProblems(tx, orgId, request.params.reader_id));
        return {
          data: rows.map((r) => ({
            received_at: toWire(r.received_at),
            bad_reads: r.bad_reads,
            unknown_reads: r.unknown_reads,
            errors: r.errors ?? [],
            payload: r.payload,
            payload_truncated: r.payload_length > PAYLOAD_SHOWN,
          })),
          last_problem_at: rows[0] ? toWire(rows[0].received_at) : null,
        };
      },
    );
  };
