import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ApiError, notFound } from '../../errors.js';
import { takeToken } from '../../http/rate-limit/gate.js';
import type { RateLimitStore } from '../../http/rate-limit/types.js';
import { MAX_ID } from '../../http/schemas/common.js';
import type { ReaderRef } from '../directory.js';
import type { IngestOutcome } from '../outcome.js';
import type { ReaderService } from '../readers-service.js';
import type { IngestService } from '../service.js';

export const WEBHOOK_PATH = '/ingest/v1/readers/:reader_id/messages';

function readerIdOf(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > MAX_ID) throw notFound('reader');
  return Number(raw);
}

function bearerSecret(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === '') throw new ApiError('unauthorized', 'Missing authorization header');
  const m = /^Bearer +(\S+)\s*$/i.exec(value);
  if (!m) throw new ApiError('unauthorized', 'Invalid authorization header format');
  return m[1]!;
}

/**
 * The reader webhook, for readers that push over HTTP (Impinj webhook mode): the body is
 * the reader's payload, any content type, taken as raw bytes up to the body limit, and
 * authenticated by the reader's webhook secret as a bearer token. 204 only once the
 * message (raw log row and sightings) is committed; a malformed payload is logged in the
 * raw log and counted, and still answered 204, so the reader does not send it forever.
 * At most TAGTRAIL_WEBHOOK_RATE_LIMIT messages a minute per reader, then 429 with
 * Retry-After (the reader retries; nothing answered 429 was stored). The secret and the
 * budget are checked before the body is read (docs/ingest.md "Reader webhook (HTTP)").
 * Not part of the public API (docs/ingest.md).
 */
export const readerWebhookRoutes =
  (readers: ReaderService, ingest: IngestService, limiter: RateLimitStore): FastifyPluginAsync =>
  async (app) => {
    // Encapsulated: these parsers apply to this plugin's routes only.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    // The reader each request authenticated as, set before its body is read.
    const authenticated = new WeakMap<FastifyRequest, ReaderRef>();

    // A body over the limit is answered 413 before the handler runs; the reader (whose secret
    // was checked) gets it in its health and problems too, or its operator would see only a
    // reader that stopped reporting. Recorded before the answer, like a stored message.
    app.addHook('onError', async (request, _reply, error) => {
      const reader = authenticated.get(request);
      if (!reader || (error as { code?: string }).code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return;
      const limit = request.routeOptions.bodyLimit;
      await ingest
        .refusedMessage(
          reader,
          'webhook',
          Date.now(),
          `webhook body refused with 413: over the limit of ${limit} bytes (TAGTRAIL_BODY_LIMIT)`,
        )
        .catch((err: unknown) =>
          request.log.warn({ err, readerId: reader.id }, 'recording a refused webhook body failed'),
        );
    });

    app.post<{ Params: { reader_id: string } }>(
      WEBHOOK_PATH,
      {
        schema: { hide: true },
        // Before the body is read: a caller without the reader's secret, or over its budget, is
        // answered at once, without the server taking up to the body limit of its bytes first.
        onRequest: async (request, reply) => {
          const secret = bearerSecret(request.headers.authorization);
          const reader = await readers.authenticateWebhook(readerIdOf(request.params.reader_id), secret);
          // Per reader, after its secret is checked: no one else can spend a reader's budget.
          await takeToken(limiter, `reader:${reader.id}`, request, reply, { what: 'messages per minute' });
          authenticated.set(request, reader);
        },
      },
      async (request, reply) => {
        const receivedAt = Date.now();
        const reader = authenticated.get(request);
        if (!reader) throw new Error('reader webhook handler reached without its onRequest authentication');
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        let outcome: IngestOutcome;
        try {
          outcome = await ingest.readerMessage(reader, body, 'webhook', receivedAt);
        } catch (err) {
          // Answered 500 or 503 and left to the reader's retry, as MQTT leaves it unacknowledged:
          // counted as the MQTT paths count theirs, or the messages-failing alert never sees it.
          ingest.instruments.messageFailed({ family: reader.family, source: 'webhook' });
          throw err;
        }
        if (outcome.errors.length > 0) {
          request.log.warn(
            { readerId: reader.id, bad: outcome.bad, errors: outcome.errors.slice(0, 5) },
            'reader webhook message had bad reads (kept in the raw log)',
          );
        }
        // A redelivery of a message already stored (docs/ingest.md, "Redeliveries"): 204 as well,
        // so the reader stops resending, with counts of 0 and this header saying why.
        if (outcome.duplicate) reply.header('x-tagtrail-duplicate', 'true');
        return reply
          .code(204)
          .header('x-tagtrail-good-reads', String(outcome.good))
          .header('x-tagtrail-bad-reads', String(outcome.bad))
          .header('x-tagtrail-unknown-reads', String(outcome.unknown))
          .send();
      },
    );
  };
