import type pg from 'pg';
import { BUILD_SCHEMA_NUMBER } from './instance-name.js';

/** A connection of an older tagtrail build, as `pg_stat_activity` shows it. */
export interface OlderConnection {
  pid: number;
  applicationName: string;
  /** Hidden (null) unless the login role may read other sessions' details. */
  clientAddr: string | null;
}

/**
 * Migrations are written for the build they ship with, not for older builds to keep running
 * on (docs/operations.md, "Upgrading"): applied under an older instance still serving, they
 * turn its writes into errors (0057 renamed a table older builds write to). Only builds
 * since 2026-12-04 name their connections (./instance-name.ts), so older ones go unseen.
 */
export class OlderBuildsConnectedError extends Error {
  constructor(readonly connections: OlderConnection[]) {
    const builds = [...new Set(connections.map((c) => c.applicationName))].sort().join(', ');
    const from = [...new Set(connections.map((c) => c.clientAddr).filter((a) => a !== null))];
    const pids = connections.map((c) => c.pid).slice(0, 10);
    super(
      `${connections.length} connection${connections.length === 1 ? '' : 's'} of an older tagtrail (${builds}) ` +
        `${connections.length === 1 ? 'is' : 'are'} open on this database (pid ${pids.join(', ')}` +
        `${connections.length > pids.length ? ', …' : ''}${from.length > 0 ? `; from ${from.join(', ')}` : ''}): ` +
        `stop every instance of the older build before this one migrates the database, or end a connection left ` +
        `behind with pg_terminate_backend(pid); nothing was changed (docs/operations.md, "Upgrading")`,
    );
    this.name = 'OlderBuildsConnectedError';
  }
}

/** The other connections to this database that an older build opened. */
export async function olderBuildConnections(client: pg.ClientBase | pg.Pool): Promise<OlderConnection[]> {
  const { rows } = await client.query<{ pid: number; application_name: string; client_addr: string | null }>(
    `SELECT pid, application_name, host(client_addr) AS client_addr
       FROM pg_stat_activity
      WHERE datname = current_database()
        AND pid <> pg_backend_pid()
        AND application_name ~ '^tagtrail@[0-9]{4}$'
        AND substr(application_name, 10)::int < $1
      ORDER BY pid`,
    [BUILD_SCHEMA_NUMBER],
  );
  return rows.map((r) => ({ pid: r.pid, applicationName: r.application_name, clientAddr: r.client_addr }));
}

/** Throws OlderBuildsConnectedError when an older build still has connections open. */
export async function refuseBesideOlderBuilds(client: pg.ClientBase): Promise<void> {
  const older = await olderBuildConnections(client);
  if (older.length > 0) throw new OlderBuildsConnectedError(older);
}
