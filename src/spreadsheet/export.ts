import type { Asset } from '../assets/schemas.js';
import type { Location } from '../locations/schemas.js';
import { COLUMNS, formatTags } from './columns.js';
import { csvLine, escapeFormula as text } from './csv.js';

/** Rows per page of an export: per statement, and per chunk handed to the download. */
export const EXPORT_PAGE = 1000;

// Free-text cells go through escapeFormula; the others are written by the service and
// never begin with a formula character: `true`/`false`, metadata's JSON object (`{`), tags
// (a tag type first) and RFC 3339 timestamps (a four-digit year; none before 1970).
export const assetLine = (a: Asset) =>
  csvLine([
    text(a.external_key),
    text(a.name),
    text(a.description ?? ''),
    String(a.is_active),
    JSON.stringify(a.metadata),
    formatTags(a.tags),
    a.valid_from,
    a.valid_to ?? '',
  ]);

export const locationLine = (l: Location) =>
  csvLine([
    text(l.external_key),
    text(l.name),
    text(l.description ?? ''),
    String(l.is_active),
    text(l.parent_external_key ?? ''),
    formatTags(l.tags),
    l.valid_from,
    l.valid_to ?? '',
  ]);

/** Thrown into the reading transaction when the download stopped taking pages: it rolls back. */
class ExportStopped extends Error {}

/**
 * The CSV of every page `readAll` reads (the header, then each page as one chunk), as a
 * generator. The pages are read inside a transaction, which lives in a callback that a
 * generator cannot yield from: `readAll` hands each page over and waits until the
 * download took the previous one, so one page is read ahead and memory stays at a page
 * or two whatever the export's size. When the download stops early (the generator is
 * returned), the waiting hand-over throws and the transaction ends. The header follows
 * the first page, so a refused filter fails before anything is written.
 */
export async function* exportCsv<T>(
  kind: keyof typeof COLUMNS,
  line: (row: T) => string,
  readAll: (onPage: (rows: T[]) => Promise<void>) => Promise<void>,
): AsyncGenerator<string> {
  let ready: string | undefined;
  let wakeReader: (() => void) | undefined;
  let wakeConsumer: (() => void) | undefined;
  let stopped = false;
  let finished = false;
  let failure: { err: unknown } | undefined;
  const wake = () => {
    const w = wakeConsumer;
    wakeConsumer = undefined;
    w?.();
  };
  const reading = readAll(async (rows) => {
    if (stopped) throw new ExportStopped();
    ready = rows.map(line).join('');
    wake();
    await new Promise<void>((resolve) => {
      wakeReader = resolve;
    });
    if (stopped) throw new ExportStopped();
  }).then(
    () => {
      finished = true;
      wake();
    },
    (err: unknown) => {
      finished = true;
      if (!(err instanceof ExportStopped)) failure = { err };
      wake();
    },
  );
  let first = true;
  try {
    for (;;) {
      if (ready !== undefined) {
        const chunk = ready;
        ready = undefined;
        // Released at once: the next page is read while this one is sent.
        const w = wakeReader;
        wakeReader = undefined;
        w?.();
        if (first) yield csvLine([...COLUMNS[kind]]);
        first = false;
        if (chunk !== '') yield chunk;
        continue;
      }
      if (finished) {
        if (failure) throw failure.err;
        if (first) yield csvLine([...COLUMNS[kind]]);
        return;
      }
      await new Promise<void>((resolve) => {
        wakeConsumer = resolve;
      });
    }
  } finally {
    stopped = true;
    const w = wakeReader;
    wakeReader = undefined;
    w?.();
    await reading;
  }
}
