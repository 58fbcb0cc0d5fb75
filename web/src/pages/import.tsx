import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, withQuery } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { PageHeader } from '../components/page.js';
import { focusLost } from '../components/use-action.js';
import { plural } from '../format.js';
import { navigate, useLocation } from '../router.js';
import { useCan, useSession } from '../session.js';
import { download, ExportCard } from './export-card.js';

/**
 * Spreadsheet import and export of assets and locations (docs/import-export.md): pick a
 * CSV, check it (a dry run that lists what each row would do), import it with progress,
 * download the refused rows; export what the list filters select.
 */

export type Kind = 'assets' | 'locations';
type Outcome = 'create' | 'update' | 'unchanged' | 'refused';

export interface RowError {
  type: string;
  field: string;
  code: string;
  message: string;
}

interface RowResult {
  row: number;
  external_key: string | null;
  outcome: Outcome;
  changed?: string[];
  errors?: RowError[];
}

interface ImportResult {
  dry_run: boolean;
  applied: boolean;
  rows: number;
  created: number;
  changed: number;
  unchanged: number;
  refused: number;
  results: RowResult[];
  results_truncated: boolean;
}

interface Progress {
  phase: 'reading' | 'checking' | 'writing' | 'done';
  done: number;
  total: number;
}

const COLUMNS: Record<Kind, string> = {
  assets: 'external_key, name, description, is_active, metadata, tags, valid_from, valid_to',
  locations: 'external_key, name, description, is_active, parent_external_key, tags, valid_from, valid_to',
};

const OUTCOME_LABEL: Record<Outcome, string> = {
  create: 'Create',
  update: 'Change',
  unchanged: 'Unchanged',
  refused: 'Refused',
};

const csvField = (v: string) => (/[",\r\n]|^\s|\s$/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const csvLine = (fields: string[]) => `${fields.map(csvField).join(',')}\r\n`;

/** The refused rows as the CLI writes them: one line per error, with the API's codes. */
export function refusedCsv(results: RowResult[]): string {
  let out = csvLine(['row', 'external_key', 'error_type', 'field', 'code', 'message']);
  for (const r of results) {
    for (const e of r.errors ?? []) {
      out += csvLine([String(r.row), r.external_key ?? '', e.type, e.field, e.code, e.message]);
    }
  }
  return out;
}

/** POSTs the file and reads the NDJSON answer: progress lines, then the result or an error. */
async function runImport(
  kind: Kind,
  file: File,
  options: { dryRun: boolean; allOrNothing: boolean; csrf: string },
  onProgress: (p: Progress) => void,
): Promise<ImportResult> {
  const res = await fetch(
    withQuery(`/internal/import/${kind}`, {
      dry_run: String(options.dryRun),
      all_or_nothing: String(options.allOrNothing),
    }),
    {
      method: 'POST',
      headers: { 'content-type': 'text/csv', 'x-csrf-token': options.csrf, accept: 'application/x-ndjson' },
      body: file,
    },
  );
  if (!res.ok || !res.body) {
    let e: { type?: string; detail?: string; fields?: RowError[] } = {};
    try {
      e = ((await res.json()) as { error?: typeof e }).error ?? {};
    } catch {
      // not JSON
    }
    throw new ApiError(
      res.status,
      e.type ?? 'error',
      e.detail ?? `${res.status} ${res.statusText}`,
      e.fields ?? [],
    );
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffered += value;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const message = JSON.parse(buffered.slice(0, newline)) as {
        progress?: Progress;
        result?: ImportResult;
        error?: { type: string; detail: string; fields?: RowError[] };
      };
      buffered = buffered.slice(newline + 1);
      if (message.progress) onProgress(message.progress);
      if (message.result) return message.result;
      if (message.error)
        throw new ApiError(409, message.error.type, message.error.detail, message.error.fields ?? []);
      newline = buffered.indexOf('\n');
    }
    if (done) throw new Error('The import ended without a result; reload to see what was imported.');
  }
}

function ProgressBar({ progress }: { progress: Progress }) {
  const label =
    progress.phase === 'writing'
      ? `Writing rows: ${progress.done} of ${progress.total}`
      : progress.phase === 'checking'
        ? `Checking ${progress.total} rows…`
        : 'Reading the file…';
  return (
    <div class="field">
      <label for="import-progress">{label}</label>
      <progress
        id="import-progress"
        max={progress.total || 1}
        value={progress.phase === 'writing' ? progress.done : undefined}
      />
    </div>
  );
}

function ResultTable({ result }: { result: ImportResult }) {
  const [show, setShow] = useState<Outcome | 'all'>(result.refused > 0 ? 'refused' : 'all');
  const rows = result.results.filter((r) => show === 'all' || r.outcome === show);
  const shown = rows.slice(0, 500);
  return (
    <>
      <div class="field narrow">
        <label for="import-show">Show rows</label>
        <select
          id="import-show"
          value={show}
          onChange={(e) => setShow(e.currentTarget.value as Outcome | 'all')}
        >
          <option value="all">All</option>
          <option value="refused">Refused ({result.refused})</option>
          <option value="create">To create ({result.created})</option>
          <option value="update">To change ({result.changed})</option>
          <option value="unchanged">Unchanged ({result.unchanged})</option>
        </select>
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable so the rows can be scrolled sideways by keyboard on a narrow screen (axe scrollable-region-focusable) */}
      <section class="table-wrap" tabIndex={0} aria-label="What each row of the file does">
        <table>
          <caption class="visually-hidden">What each row of the file does</caption>
          <thead>
            <tr>
              <th scope="col">Row</th>
              <th scope="col">Key</th>
              <th scope="col">Outcome</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <tr key={r.row}>
                <td class="num">{r.row}</td>
                <td class="mono">{r.external_key ?? <span class="muted">(new key)</span>}</td>
                <td>{OUTCOME_LABEL[r.outcome]}</td>
                <td>
                  {r.errors?.map((e) => (
                    <div key={`${e.field}-${e.code}`}>
                      <span class="mono">{e.field}</span> <span class="mono">({e.code})</span> {e.message}
                    </div>
                  ))}
                  {r.changed && `Changes ${r.changed.join(', ')}`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {(rows.length > shown.length || result.results_truncated) && (
        <p class="hint">Only the first rows are listed here; the counts above cover the whole file.</p>
      )}
    </>
  );
}

function ImportCard({ kind }: { kind: Kind }) {
  const { session } = useSession();
  const [file, setFile] = useState<File | null>(null);
  const [allOrNothing, setAllOrNothing] = useState(false);
  const [progress, setProgress] = useState<Progress | null>(null);
  const [result, setResult] = useState<ImportResult | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setResult(null);
    setError(null);
  }, [kind, file]);
  // The pressed button is disabled while the file is sent (and "Import N rows" is gone
  // after it), which drops the focus to the page body: a keyboard user is taken to the
  // outcome instead of the top of the page.
  const summaryRef = useRef<HTMLParagraphElement>(null);
  const checkRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (progress !== null || !focusLost()) return;
    if (result) summaryRef.current?.focus();
    else if (error) checkRef.current?.focus();
  }, [progress, result, error]);

  const run = async (dryRun: boolean) => {
    if (!file) return;
    setError(null);
    setResult(null);
    setProgress({ phase: 'reading', done: 0, total: 0 });
    try {
      setResult(await runImport(kind, file, { dryRun, allOrNothing, csrf: session.csrf_token }, setProgress));
    } catch (e) {
      setError(e);
    } finally {
      setProgress(null);
    }
  };

  const summary = result && (
    <p role="status" ref={summaryRef} tabIndex={-1}>
      {result.dry_run ? 'Checked' : result.applied ? 'Imported' : 'Nothing imported'}:{' '}
      {plural(result.rows, 'row')} — {result.created} {result.dry_run ? 'to create' : 'created'},{' '}
      {result.changed} {result.dry_run ? 'to change' : 'changed'}, {result.unchanged} unchanged,{' '}
      {result.refused} refused.
      {!result.dry_run && !result.applied && ' Every row must be accepted for an all-or-nothing import.'}
    </p>
  );

  return (
    <section class="card" aria-labelledby="import-title">
      <h2 id="import-title">Import {kind}</h2>
      <p class="hint">
        CSV, UTF-8, first row naming the columns: {COLUMNS[kind]}. Tags as{' '}
        <span class="mono">rfid:VALUE;barcode:VALUE</span>. Rows are matched by external_key: existing ones
        are updated, others created.
      </p>
      <div class="field">
        <label for="import-file">CSV file</label>
        {/* Fixed while a check or import runs: its answer would otherwise be shown for the
            file chosen meanwhile, and "Import N rows" would import that other file. */}
        <input
          id="import-file"
          type="file"
          accept=".csv,text/csv"
          disabled={progress !== null}
          onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
        />
      </div>
      <label class="checkbox">
        <input
          type="checkbox"
          checked={allOrNothing}
          disabled={progress !== null}
          onChange={(e) => setAllOrNothing(e.currentTarget.checked)}
        />
        Import only if every row is accepted
      </label>
      <div class="card-actions">
        <button
          type="button"
          class="button secondary"
          ref={checkRef}
          disabled={!file || progress !== null}
          onClick={() => run(true)}
        >
          Check file
        </button>
        {/* A file that would change nothing offered "Import 0 rows", which did nothing. */}
        {result?.dry_run && result.created + result.changed > 0 && (
          <button
            type="button"
            class="button primary"
            disabled={progress !== null}
            onClick={() => run(false)}
          >
            Import {plural(result.created + result.changed, 'row')}
          </button>
        )}
      </div>
      {result?.dry_run && result.created + result.changed === 0 && (
        <p class="hint">
          Nothing to import: no row of this file would create or change a record
          {result.refused > 0 ? '. Correct the refused rows and check the file again.' : '.'}
        </p>
      )}
      {progress && <ProgressBar progress={progress} />}
      <ErrorAlert error={error} />
      {summary}
      {result && result.refused > 0 && (
        <button
          type="button"
          class="button secondary"
          onClick={() =>
            download(`${kind}-refused-rows.csv`, new Blob([refusedCsv(result.results)], { type: 'text/csv' }))
          }
        >
          Download refused rows (CSV)
        </button>
      )}
      {result && <ResultTable key={`${result.dry_run}-${result.rows}`} result={result} />}
    </section>
  );
}

export function ImportPage() {
  const can = useCan();
  const { search } = useLocation();
  const kind: Kind = search.get('kind') === 'locations' ? 'locations' : 'assets';
  return (
    <main id="main">
      <PageHeader title={can('editor') ? 'Import and export' : 'Export'} />
      <fieldset class="radio-group">
        <legend>Records</legend>
        {(['assets', 'locations'] as const).map((k) => (
          <label key={k} class="radio">
            <input
              type="radio"
              name="import-kind"
              value={k}
              checked={kind === k}
              onChange={() =>
                navigate(k === 'assets' ? '/import' : '/import?kind=locations', { replace: true })
              }
            />
            {k === 'assets' ? 'Assets' : 'Locations'}
          </label>
        ))}
      </fieldset>
      {can('editor') && <ImportCard key={kind} kind={kind} />}
      <ExportCard key={kind} kind={kind} />
    </main>
  );
}
