import pg from 'pg';
import { adoptShape, type ResultInternals, rememberShape, shapeOf } from './statement-answers.js';

/**
 * Named statements sent through `client.query` (a transaction's `tx.query` of a
 * preparedQuery) with the row shape kept by ./statement-answers.ts: once a statement is
 * parsed on the connection and its shape is known, it goes as Bind/Execute without a
 * Describe, so the server sends no RowDescription and node-postgres builds no parsers
 * for it. Everything else (a Parse, a first answer, an unnamed statement, `rows`, binary
 * results, a callback) is node-postgres' own path, unchanged.
 *
 * The shape is keyed by name, text and the query's own types. A query without types is
 * parsed with the client's, which are node-postgres' global ones on every pool here
 * (src/db/pool.ts sets no per-pool types).
 */

interface Connection {
  bind(config: {
    portal: string;
    statement: string | undefined;
    values: unknown[] | undefined;
    binary: boolean | undefined;
    valueMapper(v: unknown): unknown;
  }): void;
  execute(config: { portal: string }): void;
  sync(): void;
}

/** The parts of node-postgres' Query that ShapedQuery reads and overrides. */
interface QueryInternals {
  name?: string;
  text: string;
  types?: pg.CustomTypesConfig;
  values?: unknown[];
  portal: string;
  binary?: boolean;
  _result: ResultInternals;
  _accumulateRows?: boolean;
  hasBeenParsed(connection: Connection): boolean;
  handleError(err: Error, connection: Connection): void;
  handleRowDescription(msg: unknown): void;
  prepare(connection: Connection): void;
}

const QueryClass = pg.Query as unknown as new (config: pg.QueryConfig, values?: unknown[]) => QueryInternals;

const prepareValue = (pg as unknown as { utils: { prepareValue(v: unknown): unknown } }).utils.prepareValue;

export class ShapedQuery extends QueryClass {
  override prepare(connection: Connection): void {
    const shape =
      this.name !== undefined && !this.binary && this.hasBeenParsed(connection)
        ? shapeOf(this as { name: string; text: string; types?: pg.CustomTypesConfig })
        : undefined;
    if (!shape) {
      super.prepare(connection);
      return;
    }
    adoptShape(this._result, shape);
    // Set by a RowDescription otherwise: the rows go to the result (a callback is waiting).
    this._accumulateRows = true;
    // As node-postgres' prepare, without the Parse (done) and the Describe.
    try {
      connection.bind({
        portal: this.portal,
        statement: this.name,
        values: this.values,
        binary: this.binary,
        valueMapper: prepareValue,
      });
    } catch (err) {
      // A value that cannot be sent: nothing was written. Unlike node-postgres' path, no
      // Parse is in flight, so the statement is not closed; the Sync's ReadyForQuery ends
      // the query's turn on the connection.
      connection.sync();
      this.handleError(err as Error, connection);
      return;
    }
    connection.execute({ portal: this.portal });
    connection.sync();
  }

  override handleRowDescription(msg: unknown): void {
    super.handleRowDescription(msg);
    if (this.name !== undefined && !this.binary) {
      rememberShape(this as { name: string; text: string; types?: pg.CustomTypesConfig }, this._result);
    }
  }
}

type QueryMethod = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Sends `client`'s named statements as ShapedQuery: a named config object, not a
 * Submittable, without `rows` and without a callback, answered as a promise as usual.
 */
export function shapeNamedQueries(client: pg.ClientBase): void {
  const holder = client as unknown as { query: QueryMethod };
  const original = holder.query.bind(client) as QueryMethod;
  holder.query = (config, values, callback) => {
    const c = config as { name?: unknown; submit?: unknown; rows?: unknown } | null;
    if (
      typeof c !== 'object' ||
      c === null ||
      typeof c.name !== 'string' ||
      c.submit !== undefined ||
      c.rows !== undefined ||
      typeof values === 'function' ||
      callback !== undefined
    ) {
      return original(config, values, callback);
    }
    return new Promise((resolve, reject) => {
      const query = new ShapedQuery(config as pg.QueryConfig, values as unknown[] | undefined);
      (query as unknown as { callback: (err: Error | null, res?: unknown) => void }).callback = (err, res) =>
        err ? reject(err) : resolve(res);
      original(query);
    });
  };
}
