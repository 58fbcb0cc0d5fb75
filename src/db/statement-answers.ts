import pg from 'pg';

/**
 * The answers to one named statement of an implicit read (./implicit-read.ts), gathered
 * into node-postgres' own Result, so rows come out exactly as `client.query` gives them.
 *
 * A named statement's columns never change while it exists on a connection (PostgreSQL
 * refuses to run it if they would: "cached plan must not change result type"), so the
 * shape of its rows, that is the fields, their parsers and the empty row node-postgres
 * copies for each row, is kept from its first answer by name, text and types. With a shape
 * kept, the statement is sent without a Describe: the server then sends no RowDescription,
 * and neither the message nor the parsers are built again for every read. Building them
 * was a tenth of node-postgres' share of GET /assets/{id} (docs/performance.md, step 26).
 */

/** A statement as ImplicitRead sends it: its name, text and (as for `Tx.query`) types. */
export interface StatementKey {
  name: string;
  text: string;
  types?: pg.CustomTypesConfig;
}

/** node-postgres' Result, with the parts of it that ImplicitRead fills. */
interface ResultInternals extends pg.QueryResult {
  fields: pg.FieldDef[];
  _parsers: unknown[] | undefined;
  _prebuiltEmptyResultObject: object | null;
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): pg.QueryResultRow;
  addRow(row: pg.QueryResultRow): void;
  addCommandComplete(msg: unknown): void;
}

const ResultClass = (pg as unknown as { Result: new (rowMode?: string, types?: unknown) => ResultInternals })
  .Result;

interface Shape {
  text: string;
  types: pg.CustomTypesConfig | undefined;
  fields: pg.FieldDef[];
  parsers: unknown[] | undefined;
  empty: object | null;
}

const shapes = new Map<string, Shape>();

function shapeOf(statement: StatementKey): Shape | undefined {
  const shape = shapes.get(statement.name);
  return shape && shape.text === statement.text && shape.types === statement.types ? shape : undefined;
}

/**
 * Forgets the shapes of `statements`: they are being read the usual way on a connection
 * that has not parsed them, perhaps after a migration changed their columns, so their next
 * implicit read describes them again.
 */
export function forgetShapes(statements: readonly StatementKey[]): void {
  for (const s of statements) shapes.delete(s.name);
}

export class StatementAnswers {
  readonly result: ResultInternals;
  /** Whether the statement is sent with a Describe (its shape is not known yet). */
  readonly describe: boolean;
  failed: Error | null = null;

  constructor(private readonly statement: StatementKey) {
    this.result = new ResultClass(undefined, statement.types);
    const shape = shapeOf(statement);
    this.describe = shape === undefined;
    if (shape) {
      this.result.fields = shape.fields;
      this.result._parsers = shape.parsers;
      this.result._prebuiltEmptyResultObject = shape.empty;
    }
  }

  rowDescription(msg: { fields: unknown[] }): void {
    this.result.addFields(msg.fields);
    shapes.set(this.statement.name, {
      text: this.statement.text,
      types: this.statement.types,
      fields: this.result.fields,
      parsers: this.result._parsers,
      empty: this.result._prebuiltEmptyResultObject,
    });
  }

  dataRow(msg: { fields: unknown[] }): void {
    if (this.failed) return;
    try {
      this.result.addRow(this.result.parseRow(msg.fields));
    } catch (err) {
      // A value its parser refused: the read fails once the server has answered whole.
      this.failed = err as Error;
    }
  }

  commandComplete(msg: unknown): void {
    this.result.addCommandComplete(msg);
  }
}
