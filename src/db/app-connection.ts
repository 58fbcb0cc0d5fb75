/**
 * How the API's own connections (the restricted role's pool) differ from the owner's: the
 * role they are from their start, and settings for work made of many small writes.
 */

/**
 * The trigram indexes' pending lists (assets_search, locations_search, ...: fastupdate on)
 * are merged into the index only when they pass this size or at a vacuum, and every text
 * search (`q`) reads the whole list through. At PostgreSQL's default (4 MB) a few seconds of
 * single-row creates and edits grew the assets list past 150 pages, and a `q` list under the
 * mixed load cost 4.9 ms of statement time against 1.8 ms settled (docs/performance.md,
 * steps 20 and 22). 64 kB (the smallest allowed) keeps the list to a few pages; each merge is
 * then small and is paid by the write that passes it. Set per connection, not on the indexes,
 * so bulk writes can raise it for their transaction (BULK_WRITES).
 */
export const API_PENDING_LIST_LIMIT = '64kB';

/**
 * Run first in a transaction that writes many rows (a spreadsheet import): PostgreSQL's
 * default pending list again, so its rows are merged in a few large batches instead of
 * thousands of small ones (a million seeded assets took about 14 minutes with 64 kB, 3 with
 * the default).
 */
export const BULK_WRITES = "SET LOCAL gin_pending_list_limit = '4MB'";

/**
 * Run first in a transaction that looks up and writes thousands of rows by key at once
 * (ingest's group commits, handheld and imported batches). Every statement there finds its
 * rows by key, so its cost must follow the batch, not the table. The planner does not always
 * see it so: with a table that grew since its last ANALYZE (the stays of a site's first
 * hour) it joined a batch of 3,000 keys to the stays by hashing all 100,000 of the
 * organization's stays, on every batch; with fresh statistics, pricing a random page as a
 * disk read (4), it still scanned the whole tags and stays tables for batches of 1,000 keys
 * at 100,000 assets. Ingest's tables are read all day and stay in memory, where an index
 * probe costs about what a sequential page does (1.1), and a hash or merge join could only
 * ever read more rows than the keys' index probes (docs/ingest-history.md, "Plans at 100,000
 * assets"). Per transaction, not on the connection: the API's plans are not moved by it.
 */
export const KEYED_BATCHES = `SET LOCAL random_page_cost = 1.1; SET LOCAL enable_hashjoin = off;
  SET LOCAL enable_mergejoin = off`;

/**
 * How PostgreSQL prints dates and times on every connection of the service, whatever the
 * database or its server is set to (`ALTER DATABASE ... SET DateStyle`, `... SET timezone`):
 * timestamps are read from the server's text (src/db/wire-instants.ts), which another
 * DateStyle writes as `01.01.1850 00:00:00.123 UTC` (German) or `01/01/1850 ...` (SQL),
 * read as no date, and a create answered 500; in UTC the text of every timestamp needs no
 * offset applied.
 */
const DATE_SETTINGS = '-c DateStyle=ISO -c TimeZone=UTC';

/**
 * `url` with DATE_SETTINGS added to its startup `options`, after any it has, so that they win.
 */
export function withDateSettings(url: string): string {
  const parsed = new URL(url);
  const options = parsed.searchParams.get('options');
  parsed.searchParams.set('options', options ? `${options} ${DATE_SETTINGS}` : DATE_SETTINGS);
  return parsed.toString();
}

/**
 * `url` with `-c role=<role>` and the API's settings added to its startup `options` (kept
 * with any the URL has, which come first so that these win): node-postgres lets the URL's
 * `options` override the config's, so they go in the URL.
 */
export function restrictedConnectionUrl(url: string, role: string): string {
  const parsed = new URL(url);
  const options = parsed.searchParams.get('options');
  const ours = `-c role=${role} -c gin_pending_list_limit=${API_PENDING_LIST_LIMIT}`;
  parsed.searchParams.set('options', options ? `${options} ${ours}` : ours);
  return parsed.toString();
}
