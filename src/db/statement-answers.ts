import pg from 'pg';

/**
 * The row shapes of named statements, kept for ./shaped-query.ts (every transaction's
 * named statements) and ./implicit-read.ts, and the answers to one named statement of an
 * implicit read, gathered into node-postgres' own Result, so rows come out exactly as
 * `client.query` gives them.
 *
 * A named statement's columns never change while it exists on a connection (PostgreSQL
 * refuses to run it if they would: "cached plan must not change result type"), so the
 * shape of its rows, that is the fields, their parsers and the empty row node-postgres
 * copies for each row, is kept from its first answer by name, text and types. With a shape
 * kept, the statement is sent without a Describe: the server then sends no RowDescription,
 * and neither the message nor the parsers are built again for every read. Building them
 * was a tenth of node-postgres' share of GET /assets/{id} (docs/performance.md, step 26).
 */

/** What a shape is kept by: a named statement's name, text and (as for `Tx.query`) types. */
export interface StatementKey {
  name: string;
  text: string;
  types?: pg.CustomTypesConfig;
}

/** node-postgres' Result, with the parts of it that a kept shape fills. */
export interface ResultInternals extends pg.QueryResult {
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

export interface Shape {
  text: string;
  types: pg.CustomTypesConfig | undefined;
  fields: pg.FieldDef[];
  parsers: unknown[] | undefined;
  empty: object | null;
}

const shapes = new Map<string, Shape>();

/** The kept shape of `statement`'s rows, if its first answer has been seen. */
export function shapeOf(statement: StatementKey): Shape | undefined {
  const shape = shapes.get(statement.name);
  return shape && shape.text === statement.text && shape.types === statement.types ? shape : undefined;
}

/** Keeps the shape `result` has from `statement`'s RowDescription. */
export function rememberShape(statement: StatementKey, result: ResultInternals): void {
  shapes.set(statement.name, {
    text: statement.text,
    types: statement.types,
    fields: result.fields,
    parsers: result._parsers,
    empty: result._prebuiltEmptyResultObject,
  });
}

/** Readies `result` for rows of `shape`, as a RowDescription would. */
export function adoptShape(result: ResultInternals, shape: Shape): void {
  result.fields = shape.fields;
  result._parsers = shape.parsers;
  result._prebuiltEmptyResultObject = shape.empty;
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
    if (shape) adoptShape(this.result, shape);
  }

  rowDescription(msg: { fields: unknown[] }): void {
    this.result.addFields(msg.fields);
    rememberShape(this.statement, this.result);
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
