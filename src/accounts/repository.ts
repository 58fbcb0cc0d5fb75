import type { Tx } from '../db/pool.js';

export interface Organization {
  id: number;
  name: string;
  createdAt: Date;
}

export async function insertOrganization(tx: Tx, name: string): Promise<Organization> {
  const { rows } = await tx.query<Organization>(
    'INSERT INTO organizations (name) VALUES ($1) RETURNING id, name, created_at AS "createdAt"',
    [name],
  );
  return rows[0]!;
}

/** The organization by id: one statement, its only parameter the id (Database.readOne). */
export const FIND_ORGANIZATION =
  'SELECT id, name, created_at AS "createdAt" FROM organizations WHERE id = $1';

export async function findOrganization(tx: Tx, orgId: number): Promise<Organization | null> {
  const { rows } = await tx.query<Organization>(FIND_ORGANIZATION, [orgId]);
  return rows[0] ?? null;
}
