/**
 * Property tests: the tags cell and a CSV record read back as written, whatever they hold,
 * and an export imported again changes nothing (generated assets and locations, with
 * arbitrary text, metadata and tags).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Asset } from '../../src/assets/schemas.js';
import { hasIntegerBeyondInt64 } from '../../src/json-checks.js';
import type { Location } from '../../src/locations/schemas.js';
import { COLUMNS, formatTags, parseTags, rowBody } from '../../src/spreadsheet/columns.js';
import { CsvReader, csvLine } from '../../src/spreadsheet/csv.js';
import { assetLine, locationLine } from '../../src/spreadsheet/export.js';
import { refusedReport } from '../../src/spreadsheet/report.js';
import { type SheetFixture, sheetFixture } from './helpers.js';

const TAG_TYPES = ['rfid', 'ble', 'barcode'] as const;

/** Control characters replaced by `_`; `keep` names the ones left (tab, LF, CR). */
const noControls = (s: string, keep = '') =>
  [...s].map((c) => ((c.charCodeAt(0) < 0x20 || c === '\u007f') && !keep.includes(c) ? '_' : c)).join('');

/** Any Unicode text that survives UTF-8 (no lone surrogates). */
const text = (max = 20) =>
  fc.string({ unit: 'binary', maxLength: max }).filter((s) => Buffer.from(s, 'utf8').toString('utf8') === s);

/** Text the API takes as a tag value: no control characters but tab, LF and CR. */
const tagValue = text(30)
  .map((s) => noControls(s, '\t\n\r'))
  .filter((s) => s.length > 0);
const tag = fc.record({ tag_type: fc.constantFrom(...TAG_TYPES), value: tagValue });

function readBack(line: string): string[][] {
  const reader = new CsvReader();
  const records = [...reader.push(Buffer.from(line, 'utf8')), ...reader.end()];
  return records.map((r) => {
    expect(r.problem).toBeUndefined();
    return r.fields!;
  });
}

describe('tags cell and CSV record', () => {
  it('a tags cell reads back as the tags it was written from', () => {
    fc.assert(
      fc.property(fc.array(tag, { maxLength: 6 }), (tags) => {
        expect(parseTags(formatTags(tags))).toEqual(tags);
      }),
      {
        examples: [
          [[{ tag_type: 'rfid', value: 'a;b' }]],
          [
            [
              { tag_type: 'ble', value: 'ends\\' },
              { tag_type: 'rfid', value: '\\;' },
            ],
          ],
          [
            [
              { tag_type: 'barcode', value: 'x:y:z' },
              { tag_type: 'rfid', value: ' lead' },
            ],
          ],
        ],
      },
    );
  });

  it('a record reads back as the fields it was written from, whatever they hold', () => {
    fc.assert(
      fc.property(fc.array(text(), { minLength: 1, maxLength: 8 }), (fields) => {
        expect(readBack(csvLine(fields))).toEqual([fields]);
      }),
      { examples: [[['']], [['a,b', 'say "hi"', 'two\r\nlines', '']], [['\uFEFFbom', ' ', '"']]] },
    );
  });
});

/** Text that often begins as a formula would: quotes, then `=`, `+`, `-`, `@`, tab or CR, or not. */
const formulaish = fc
  .tuple(
    fc.constantFrom('', "'", "''", "'''"),
    fc.constantFrom('', '=', '+', '-', '@', '\t', '\r', 'a'),
    text(12),
  )
  .map(([quotes, lead, rest]) => quotes + lead + rest)
  .filter((s) => s.length > 0 && !s.includes('\u0000'));

const RUNS_AS_FORMULA = /^[=+\-@\t\r]/;

describe('formula injection', () => {
  it('no exported cell begins as a formula, and import reads back exactly the strings exported', () => {
    fc.assert(
      fc.property(formulaish, formulaish, formulaish, formulaish, (key, name, description, parent) => {
        const asset = {
          external_key: key,
          name,
          description,
          is_active: true,
          metadata: {},
          tags: [],
          valid_from: '2030-01-01T00:00:00.000Z',
          valid_to: null,
        } as unknown as Asset;
        const location = { ...asset, parent_external_key: parent } as unknown as Location;
        for (const [kind, line] of [
          ['assets', assetLine(asset)],
          ['locations', locationLine(location)],
        ] as const) {
          const [cells] = readBack(line);
          for (const cell of cells!) expect(cell).not.toMatch(RUNS_AS_FORMULA);
          const { body, errors } = rowBody([...COLUMNS[kind]], cells!);
          expect(errors).toEqual([]);
          expect(body).toMatchObject({ external_key: key, name, description });
          if (kind === 'locations') expect(body.parent_external_key).toBe(parent);
        }
      }),
      { examples: [['=1+1', '\'=HYPERLINK("x")', '\t=cmd', "''-2"]] },
    );
  });

  it('a hand-made cell with one quote before a formula character loses the quote; other quotes stay', () => {
    const { body } = rowBody(['name', 'description'], ["'=SUM(A1)", "'plain"]);
    expect(body).toEqual({ name: '=SUM(A1)', description: "'plain" });
  });

  it('the refused-rows report escapes the key and the message', () => {
    const report = [
      ...refusedReport([
        {
          row: 2,
          external_key: '=cmd',
          outcome: 'refused',
          errors: [{ type: 'conflict', field: 'tags', code: 'conflict', message: '@x' }],
        },
      ]),
    ].join('');
    const [, cells] = readBack(report);
    expect(cells).toEqual(['2', "'=cmd", 'conflict', 'tags', 'conflict', "'@x"]);
  });
});

describe('export then import', { timeout: 120_000 }, () => {
  let f: SheetFixture;
  let run = 0;
  beforeAll(async () => {
    f = await sheetFixture();
  });
  afterAll(() => f.t.close());

  const name = text(30)
    .map((s) => noControls(s).trim())
    .filter((s) => s.length > 0);
  const description = fc.option(
    text(40)
      .map((s) => noControls(s, '\t\n\r'))
      .filter((s) => s.length > 0),
  );
  const metadata = fc
    .dictionary(text(8), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 })
    // What the API takes as metadata: no NUL, no integer past int64 (a double such as -2^63
    // prints as -9223372036854776000, one past the bound), which an import refuses alike.
    .filter((m) => !JSON.stringify(m).includes('\\u0000') && !hasIntegerBeyondInt64(JSON.stringify(m)));

  it('changes nothing: every exported row is unchanged when imported again', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            name,
            description,
            metadata,
            is_active: fc.boolean(),
            tags: fc.array(tag, { maxLength: 3 }),
          }),
          {
            minLength: 1,
            maxLength: 5,
          },
        ),
        async (assets) => {
          const prefix = `P${++run}`;
          let csv = csvLine(['external_key', 'name', 'description', 'is_active', 'metadata', 'tags']);
          assets.forEach((a, i) => {
            // Tag values made unique per run and row, so rows never claim each other's tags.
            const tags = a.tags.map((t, j) => ({ ...t, value: `${prefix}-${i}-${j}-${t.value}` }));
            csv += csvLine([
              `${prefix}-${i}`,
              a.name,
              a.description ?? '',
              String(a.is_active),
              JSON.stringify(a.metadata),
              formatTags(tags),
            ]);
          });
          const imported = await f.importCsv('assets', csv);
          expect(imported.refused, JSON.stringify(imported.results.find((r) => r.errors))).toBe(0);
          const keys = assets.map((_, i) => `${prefix}-${i}`);
          const exported = await f.exportCsv('assets', { external_key: keys });
          expect(exported.trim().split('\r\n').length).toBeGreaterThanOrEqual(assets.length + 1);
          const again = await f.importCsv('assets', exported);
          expect(again).toMatchObject({ created: 0, changed: 0, refused: 0, unchanged: assets.length });
          const locations = `external_key,name,description,parent_external_key\r\n${keys
            .map((k, i) =>
              csvLine([
                `${k}-L`,
                assets[i]!.name,
                assets[i]!.description ?? '',
                i > 0 ? `${keys[i - 1]}-L` : '',
              ]),
            )
            .join('')}`;
          expect((await f.importCsv('locations', locations)).refused).toBe(0);
          const tree = await f.exportCsv('locations', { external_key: keys.map((k) => `${k}-L`) });
          expect(await f.importCsv('locations', tree)).toMatchObject({ created: 0, changed: 0, refused: 0 });
        },
      ),
      { numRuns: 15 },
    );
  });
});
