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
  const { rows } = await pool.query<{
    exists: boolean;
    member: boolean;
    granted: boolean;
    login: string;
    superuser: boolean;
    bypassrls: boolean;
    owns: string | null;
  }>(
    `SELECT r.oid IS NOT NULL AS exists,
            coalesce(pg_has_role(current_user, r.oid, 'MEMBER'), false) AS member,
            coalesce(has_table_privilege(r.oid, 'public.organizations', 'SELECT'), false) AS granted,
            current_user AS login,
            coalesce(a.rolsuper, false) AS superuser,
            coalesce(a.rolbypassrls, false) AS bypassrls,
            (SELECT c.relname FROM pg_class c
              WHERE r.oid IS NOT NULL AND c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
                AND pg_has_role(r.oid, c.relowner, 'USAGE')
              ORDER BY c.relname LIMIT 1) AS owns
       FROM (SELECT to_regrole($1)::oid AS oid) r
       LEFT JOIN pg_roles a ON a.oid = r.oid`,
    [APP_ROLE],
  );
  const { exists, member, granted, login, superuser, bypassrls, owns } = rows[0]!;
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
  // Row-level security is the second wall between organizations, and PostgreSQL lets three
  // kinds of role through it without a word: superusers, roles with BYPASSRLS, and a
  // table's owner (or a member of the owner's role). Serving with such a role would look
  // right until a query forgot its org_id filter.
  const through = superuser
    ? `is a superuser (ALTER ROLE ${APP_ROLE} NOSUPERUSER;)`
    : bypassrls
      ? `has BYPASSRLS (ALTER ROLE ${APP_ROLE} NOBYPASSRLS;)`
      : owns !== null
        ? `owns the table ${owns}, or is a member of its owner's role (the migrations' user, ${login}, must own the tables; REVOKE the membership or ALTER TABLE ... OWNER TO ${login})`
        : null;
  if (through) {
    throw new Error(
      `the role ${APP_ROLE}, which the service's connections take, ${through}: row-level security would not apply to it, ` +
        `and it keeps each organization's rows from the others' requests (docs/architecture.md, "Row-level security")`,
    );
  }
}
