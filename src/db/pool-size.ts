import { availableParallelism } from 'node:os';

/**
 * Connections per pool when DATABASE_POOL_SIZE is not set: twice this machine's cores and
 * two more (at least 6). PostgreSQL runs one process per connection, so connections beyond
 * what the cores can run at once only queue inside the server, where they cost more than
 * a request waiting in this process for a free one: each extra backend is another process
 * to switch to per round trip and another contender for the same index pages and locks.
 * On the 2-core machine of docs/performance-history.md ("Pool size") the mixed load spent about a
 * tenth less CPU per request with 6 connections than with 20 (the earlier fixed size).
 * The cores counted are this machine's: right for the embedded server, a starting point for
 * an external one, which may have more and is then better served by setting the size.
 */
export function defaultPoolSize(cores: number = availableParallelism()): number {
  return Math.max(6, 2 * cores + 2);
}

/** What the embedded server was given before it followed the pools (and its floor). */
export const EMBEDDED_MIN_CONNECTIONS = 200;
/** The listener, a backup's replication connection, commands that join, psql: spare slots. */
const EMBEDDED_SPARE_CONNECTIONS = 50;

/**
 * `max_connections` of the embedded server the service starts: its two pools at
 * `poolSize` each and spare slots, at least 200. A fixed 200 refused connections under load
 * once the pools outgrew it (DATABASE_POOL_SIZE past about 90, or the default on a
 * machine of 48 cores or more), and the requests that needed them failed.
 */
export function embeddedMaxConnections(poolSize: number): number {
  return Math.max(EMBEDDED_MIN_CONNECTIONS, 2 * poolSize + EMBEDDED_SPARE_CONNECTIONS);
}
