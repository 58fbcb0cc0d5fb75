import type pg from 'pg';
import { APP_ROLE } from './pool.js';

/**
 * Checks, once the database is migrated, that the restricted role the API's connections take
 * (`-c role=tagtrail_app`) is usable there: it exists, the login user may take it, and it
 * holds its privileges on the service's tables. Roles belong to the PostgreSQL server, not
 * to a database, and pg_dump leaves them out: a dump restored on a server without the role
 * gets none of it (pg_restore reports each GRANT as an error it ignores), and the
 * migrations, all recorded, make nothing again. The service then started, answered /readyz
 * 200, and answered every request 500 (`role "tagtrail_app" does not exist`, or permission
 * denied once the role had been made by hand). It now refuses to start, saying what to do.
 */
export async function checkAppRole(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query<{ exists: boolean; member: boolean; granted: boolean; login: string }>(
    `SELECT r.oid IS NOT NULL AS exists,
            coalesce(pg_has_role(current_user, r.oid, 'MEMBER'), false) AS member,
            coalesce(has_table_privilege(r.oid, 'public.organizations', 'SELECT'), false) AS granted,
            current_user AS login
       FROM (SELECT to_regrole($1)::oid AS oid) r`,
    [APP_ROLE],
  );
  const { exists, member, granted, login } = rows[0]!;
  const again =
    'then restore the dump again into an empty database (docs/operations.md, "Backups with DATABASE_URL")';
  if (!exists) {
    throw new Error(
      `the role ${APP_ROLE}, which the service's connections take, does not exist on this PostgreSQL server: ` +
        `a database restored from pg_dump on a server without it lost every privilege granted to it. ` +
        `Create it first (CREATE ROLE ${APP_ROLE} NOLOGIN; GRANT ${APP_ROLE} TO ${login};), ${again}`,
    );
  }
  if (!member) {
    throw new Error(
      `the user ${login} may not take the role ${APP_ROLE}, which the service's connections take: GRANT ${APP_ROLE} TO ${login};`,
    );
  }
  if (!granted) {
    throw new Error(
      `the role ${APP_ROLE} holds no privileges on this database's tables: it was restored from pg_dump before the role ` +
        `existed on this server (pg_restore reported 'role "${APP_ROLE}" does not exist'); now that it does, ${again}`,
    );
  }
}
