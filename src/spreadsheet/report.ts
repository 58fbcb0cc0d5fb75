import { csvLine } from './csv.js';
import type { RowResult } from './rows.js';

export const REPORT_COLUMNS = ['row', 'external_key', 'error_type', 'field', 'code', 'message'] as const;

/**
 * The refused rows as CSV: one line per error (a row refused for two fields has two),
 * with the API's error type and field code, so the sheet can be fixed and imported again.
 */
export function* refusedReport(results: RowResult[]): Generator<string> {
  yield csvLine([...REPORT_COLUMNS]);
  for (const r of results) {
    for (const e of r.errors ?? []) {
      yield csvLine([String(r.row), r.external_key ?? '', e.type, e.field, e.code, e.message]);
    }
  }
}
