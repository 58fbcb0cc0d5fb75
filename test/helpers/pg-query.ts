import pg from 'pg';

/** Runs `sql` on a connection of its own and returns the rows. */
export async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Whether a server answers at `url`. */
export async function reachable(url: string): Promise<boolean> {
  try {
    await query(url, 'SELECT 1');
    return true;
  } catch {
    return false;
  }
}
