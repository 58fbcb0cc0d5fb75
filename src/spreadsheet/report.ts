import { csvLine, escapeFormula } from './csv.js';
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
      // The key, the field and the message can carry the file's own text: escaped as an
      // export's free-text cells are, since the report is opened in a spreadsheet too.
      yield csvLine([
        String(r.row),
        escapeFormula(r.external_key ?? ''),
        e.type,
        escapeFormula(e.field),
        e.code,
        escapeFormula(e.message),
      ]);
    }
  }
}
