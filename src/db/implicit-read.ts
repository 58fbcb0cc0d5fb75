import pg from 'pg';
import { checkout } from './checkout.js';
import { streamOf } from './commit.js';
import { takeOwedCommit } from './opening.js';
import { StatementAnswers } from './statement-answers.js';
import { DatabaseUnavailableError, isDatabaseUnavailable } from './unavailable.js';

/**
 * Reads that are a fixed set of named statements, sent as one implicit transaction: the
 * organization's setting (a named `set_config`, local to the transaction) and the
 * statements go as Bind/Execute messages behind one Sync, which the server runs as one
 * transaction and answers at once. No BEGIN, SET LOCAL or COMMIT: three statements and
 * their answers fewer than `readWithOrg`, whose COMMIT is also owed to the connection's
 * next user. The same snapshots as there (READ COMMITTED takes one per statement either
 * way) and the same row-level security: the setting ends with the Sync.
 *
 * node-postgres ends every query with a Sync; `ImplicitRead` is one query of node-postgres
 * (a subclass of its Query, which its pipeline mode requires) that sends several
 * statements and hands each its own answers (./statement-answers.ts, which also keeps
 * each statement's row shape: described once, not on every read). It sends no Parse:
 * every statement must already be parsed on the connection (`parsedOn`), so a failed
 * Parse can never leave node-postgres' record of the connection's statements wrong; the
 * caller otherwise reads the usual way, which parses them.
 */

/** A named statement with its values (preparedQuery) and, as for `Tx.query`, its types. */
export interface NamedRead {
  name: string;
  text: string;
  values: unknown[];
  types?: pg.CustomTypesConfig;
}

/**
 * The organization's setting for the implicit transaction; READ ONLY as readWithOrg's. Its
 * statements run their generic plans: each is read by id, or is a list page whose LIMIT and
 * OFFSET are parameters, which PostgreSQL prices at a tenth of the table in a generic plan
 * and so plans on every call otherwise (half the default list's PostgreSQL time,
 * docs/performance.md, step 30). The list-plans test holds those plans to the indexes.
 */
const IMPLICIT_OPENING = {
  name: 'tt_implicit_opening',
  text: `SELECT set_config('tagtrail.org_id', $1, true), set_config('transaction_read_only', 'on', true),
  set_config('plan_cache_mode', 'force_generic_plan', true)`,
};

interface Connection {
  parsedStatements: Record<string, string>;
  stream: { cork?(): void; uncork?(): void };
  bind(config: {
    portal: string;
    statement: string;
    values: unknown[];
    valueMapper(v: unknown): unknown;
  }): void;
  describe(config: { type: 'P'; name: string }): void;
  execute(config: { portal: string }): void;
  sync(): void;
}

/** What ImplicitRead, a Query of node-postgres, uses of its Query. */
interface QueryInternals {
  callback?: (err: Error | null, result?: unknown) => void;
}

const QueryClass = pg.Query as unknown as new (config: pg.QueryConfig) => QueryInternals;

/** Whether every statement is parsed on the client's connection (so none needs a Parse). */
function parsedOn(client: pg.PoolClient, reads: readonly { name: string; text: string }[]): boolean {
  const parsed = connectionOf(client).parsedStatements;
  return reads.every((r) => parsed[r.name] === r.text);
}

const connectionOf = (client: pg.PoolClient) => (client as unknown as { connection: Connection }).connection;

/**
 * Whether an implicit read (Database.readNamed) can send `value`: numbers, strings and null
 * only, which is what statements read by id and key take. Callers with other values (an
 * array, a Date) read them in a transaction instead.
 */
export function implicitlySendable(value: unknown): boolean {
  const type = typeof value;
  return (
    value === null ||
    type === 'undefined' ||
    type === 'string' ||
    type === 'number' ||
    type === 'bigint' ||
    type === 'boolean'
  );
}

/** A parameter as text, as node-postgres sends it; anything else is refused before anything is sent. */
function textOf(value: unknown): string | null {
  if (!implicitlySendable(value)) {
    throw new TypeError(`an implicit read takes numbers, strings and null, not ${typeof value}`);
  }
  return value === null || value === undefined ? null : String(value);
}

/**
 * The opening (IMPLICIT_OPENING, whose answer nobody reads: it goes without a Describe and
 * its row is dropped) and `reads`, each answered into its own StatementAnswers.
 */
class ImplicitRead extends (QueryClass as unknown as new (config: pg.QueryConfig) => object) {
  private readonly answers: StatementAnswers[];
  /** The statement being answered: 0 is the opening, i + 1 is `reads[i]`. */
  private index = 0;

  constructor(
    private readonly openingValues: string[],
    private readonly reads: readonly NamedRead[],
    done: (err: Error | null, results?: pg.QueryResult[]) => void,
  ) {
    super({ text: '' });
    this.answers = reads.map((r) => new StatementAnswers(r));
    // Answered through `callback`, which node-postgres wraps (its read timeout's timer).
    this.query.callback = (err, results) => done(err, results as pg.QueryResult[] | undefined);
  }

  private get query(): QueryInternals {
    return this as unknown as QueryInternals;
  }

  submit(connection: Connection): null {
    connection.stream.cork?.();
    try {
      connection.bind({
        portal: '',
        statement: IMPLICIT_OPENING.name,
        values: this.openingValues,
        valueMapper: textOf,
      });
      connection.execute({ portal: '' });
      this.reads.forEach((r, i) => {
        connection.bind({ portal: '', statement: r.name, values: r.values, valueMapper: textOf });
        if (this.answers[i]!.describe) connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '' });
      });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  private get answering(): StatementAnswers | undefined {
    return this.index === 0 ? undefined : this.answers[this.index - 1];
  }

  handleRowDescription(msg: { fields: unknown[] }): void {
    this.answering?.rowDescription(msg);
  }

  handleDataRow(msg: { fields: unknown[] }): void {
    this.answering?.dataRow(msg);
  }

  handleCommandComplete(msg: unknown): void {
    this.answering?.commandComplete(msg);
    this.index++;
  }

  handleEmptyQuery(): void {
    this.index++;
  }

  handleError(err: Error): void {
    this.query.callback?.(err);
  }

  handleReadyForQuery(): void {
    const failed = this.answers.find((a) => a.failed);
    if (failed) this.query.callback?.(failed.failed);
    else if (this.index !== this.answers.length + 1)
      this.query.callback?.(new Error('an implicit read was not answered whole'));
    else
      this.query.callback?.(
        null,
        this.answers.map((a) => a.result),
      );
  }
}

/**
 * Runs `reads` on `client` behind the organization's setting, as one implicit transaction;
 * resolves with their results in order. `client` must be out of any transaction and have
 * every statement, IMPLICIT_OPENING included, parsed (`parsedOn`), and the values must
 * have passed `textOf` (readNamedImplicitly checks them before choosing a path).
 */
function readImplicitly(
  client: pg.PoolClient,
  orgId: number,
  reads: readonly NamedRead[],
): Promise<pg.QueryResult[]> {
  return new Promise((resolve, reject) => {
    const query = new ImplicitRead([String(orgId)], reads, (err, results) =>
      err ? reject(err) : resolve(results!),
    );
    client.query(query as unknown as pg.QueryConfig);
  });
}

/** A read on a checked-out connection, retried once on a new one when the connection was gone. */
async function onConnection<T>(pool: pg.Pool, read: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await checkout(pool, false);
    try {
      const result = await read(client);
      client.release();
      return result;
    } catch (err) {
      if (isDatabaseUnavailable(err)) {
        // Nothing was committed but a read: once more on a new connection, as inTransaction does.
        client.release(err as Error);
        if (attempt === 1) continue;
        throw new DatabaseUnavailableError(err);
      }
      // The implicit transaction rolled back; the connection is clean.
      client.release();
      throw err;
    }
  }
}

/**
 * `statement` (parameters already inlined) behind `set_config` in one message: the server
 * runs the message as one implicit transaction, so the setting holds for the statement and
 * ends with it; an owed COMMIT (./opening.ts) goes first, as its own transaction. `orgId`
 * is a checked integer.
 */
export function readOneImplicitly<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  orgId: number,
  statement: string,
): Promise<pg.QueryResult<R>> {
  return onConnection(pool, async (client) => {
    const commit = takeOwedCommit(client) ? 'COMMIT; ' : '';
    const results = (await client.query(
      `${commit}SELECT set_config('tagtrail.org_id', '${orgId}', true); ${statement}`,
    )) as unknown as pg.QueryResult<R>[];
    return results[results.length - 1]!;
  });
}

/**
 * `reads` as one implicit transaction behind IMPLICIT_OPENING on a connection that has
 * them all parsed; on one that has not, `otherwise` (a readWithOrg of the same statements,
 * which parses them there) answers, and parses IMPLICIT_OPENING too. `orgId` is a checked
 * integer.
 */
export async function readNamedImplicitly(
  pool: pg.Pool,
  orgId: number,
  reads: readonly NamedRead[],
  otherwise: (reads: readonly NamedRead[]) => Promise<pg.QueryResult[]>,
): Promise<pg.QueryResult[]> {
  for (const r of reads) r.values.forEach(textOf);
  let unparsed = false;
  const results = await onConnection(pool, async (client) => {
    if (!parsedOn(client, [IMPLICIT_OPENING, ...reads])) {
      unparsed = true;
      return [];
    }
    const stream = streamOf(client);
    // The owed COMMIT and the read leave in one write.
    stream?.cork();
    try {
      if (takeOwedCommit(client)) client.query('COMMIT').catch(() => undefined);
      return readImplicitly(client, orgId, reads);
    } finally {
      stream?.uncork();
    }
  });
  if (!unparsed) return results;
  return otherwise([
    { name: IMPLICIT_OPENING.name, text: IMPLICIT_OPENING.text, values: [String(orgId)] },
    ...reads,
  ]).then((all) => all.slice(1));
}
