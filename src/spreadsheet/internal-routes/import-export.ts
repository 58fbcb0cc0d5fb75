import { PassThrough, Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { AssetListQuery } from '../../assets/schemas.js';
import { ApiError } from '../../errors.js';
import { callerOf, sessionOf } from '../../http/plugins/internal-auth.js';
import type { InternalServices } from '../../internal-services.js';
import { LocationListQuery } from '../../locations/schemas.js';
import type { Kind } from '../columns.js';
import type { Progress, RowResult } from '../rows.js';
import type { ImportResult } from '../service.js';

/** Largest CSV upload the web app's import takes (about a million rows of assets). */
export const MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

/** Rows besides the refused ones that an import answer lists (the dry-run table's first page). */
export const LISTED_ROWS = 1000;

const ImportQuery = Type.Object(
  {
    dry_run: Type.Boolean({ default: false, description: 'Decide and report every row; write nothing' }),
    all_or_nothing: Type.Boolean({
      default: false,
      description: 'Write nothing unless every row is accepted',
    }),
  },
  { additionalProperties: false },
);

/** The list endpoint's filters (and sort), without paging: an export is every page. */
const exportQuery = (list: typeof AssetListQuery | typeof LocationListQuery) => {
  const { limit: _limit, offset: _offset, ...properties } = list.properties as Record<string, unknown>;
  const required = (list.required ?? []).filter((name) => name !== 'limit' && name !== 'offset');
  return Type.Unsafe<Record<string, unknown>>({ ...list, properties, required });
};

/** Counts bytes through; past `max` the stream fails with 413 payload_too_large. */
function limited(source: Readable, max: number): Readable {
  let seen = 0;
  const out = new PassThrough();
  source.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > max && !out.destroyed) {
      // Stop reading it, but let the rest of the upload drain so the 413 can still be sent.
      source.unpipe(out);
      source.resume();
      out.destroy(new ApiError('payload_too_large', `the file must not exceed ${max} bytes`));
    }
  });
  source.on('error', (err) => out.destroy(err));
  source.pipe(out);
  return out;
}

/** The answer's rows: every refused row, and the first LISTED_ROWS others. */
function listed(results: RowResult[]): { rows: RowResult[]; truncated: boolean } {
  let others = 0;
  const rows = results.filter((r) => r.outcome === 'refused' || ++others <= LISTED_ROWS);
  return { rows, truncated: others > LISTED_ROWS };
}

function summary(result: ImportResult) {
  const { results, ...counts } = result;
  const { rows, truncated } = listed(results);
  return { ...counts, results: rows, results_truncated: truncated };
}

/**
 * CSV import and export for the web app (docs/import-export.md).
 *
 * POST /internal/import/{assets|locations} takes the file as the raw `text/csv` body,
 * streamed (at most MAX_UPLOAD_BYTES). A file that cannot be imported at all (its header,
 * an empty file, too large) is answered as an error as usual. Otherwise, once the file is
 * read, the answer is NDJSON: `{"progress": {phase, done, total}}` lines while rows are
 * checked and written, then one `{"result": ...}` line, or `{"error": ...}` if the writes
 * failed (nothing was written then).
 */
export const spreadsheetRoutes =
  (s: InternalServices): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const kind of ['assets', 'locations'] as const satisfies Kind[]) {
      app.post(
        `/internal/import/${kind}`,
        { config: { role: 'editor', streamedBody: ['text/csv'] }, schema: { querystring: ImportQuery } },
        async (request, reply) => {
          const length = Number(request.headers['content-length'] ?? 0);
          if (length > MAX_UPLOAD_BYTES) {
            throw new ApiError('payload_too_large', `the file must not exceed ${MAX_UPLOAD_BYTES} bytes`);
          }
          const body = request.body instanceof Readable ? limited(request.body, MAX_UPLOAD_BYTES) : [];
          const out = new PassThrough();
          const line = (value: unknown) => out.write(`${JSON.stringify(value)}\n`);
          let streaming = false;
          let last = 0;
          let resolveStarted: () => void = () => undefined;
          const started = new Promise<void>((resolve) => {
            resolveStarted = resolve;
          });
          const onProgress = (p: Progress) => {
            if (p.phase === 'reading') return;
            if (!streaming) {
              streaming = true;
              resolveStarted();
            }
            const now = Date.now();
            if (p.phase === 'writing' && p.done < p.total && now - last < 200) return;
            last = now;
            line({ progress: p });
          };
          const running = s.spreadsheets.import(callerOf(request), kind, body, {
            dryRun: request.query.dry_run,
            allOrNothing: request.query.all_or_nothing,
            onProgress,
          });
          // Until the file is read, a failure is an ordinary error answer.
          await Promise.race([started, running]);
          running.then(
            (result) => {
              line({ result: summary(result) });
              out.end();
            },
            (err: unknown) => {
              const e =
                err instanceof ApiError
                  ? { type: err.type, detail: err.detail, fields: err.fields }
                  : { type: 'internal_error', detail: 'The import failed; nothing was imported' };
              if (!(err instanceof ApiError)) request.log.error({ err }, 'import failed');
              line({ error: e });
              out.end();
            },
          );
          return reply.type('application/x-ndjson; charset=utf-8').send(out);
        },
      );

      app.get(
        `/internal/export/${kind}`,
        {
          config: { role: 'viewer' },
          schema: { querystring: exportQuery(kind === 'assets' ? AssetListQuery : LocationListQuery) },
        },
        async (request, reply) => {
          const { orgId } = sessionOf(request);
          const filters = request.query as Record<string, unknown>;
          const lines =
            kind === 'assets'
              ? s.spreadsheets.exportAssets(orgId, filters as never)
              : s.spreadsheets.exportLocations(orgId, filters as never);
          // The first page is read before the answer starts, so a bad filter is a 400.
          const first = await lines.next();
          async function* all() {
            if (!first.done) yield first.value;
            yield* lines;
          }
          const date = new Date().toISOString().slice(0, 10);
          return reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="${kind}-${date}.csv"`)
            .send(Readable.from(all()));
        },
      );
    }
  };
