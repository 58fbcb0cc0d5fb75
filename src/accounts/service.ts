import type { Database } from '../db/pool.js';
import { ApiError, fieldError } from '../errors.js';
import { FIND_ORGANIZATION, insertOrganization, type Organization } from './repository.js';

export class OrganizationService {
  constructor(private readonly db: Database) {}

  /** Operators and sign-up create organizations; nothing is visible before it exists. */
  async create(name: string): Promise<Organization> {
    const trimmed = name.trim();
    if (trimmed.length < 1)
      throw fieldError('name', 'too_short', 'name must be at least 1 character', { min_length: 1 });
    if (trimmed.length > 255)
      throw fieldError('name', 'too_long', 'name must be at most 255 characters', { max_length: 255 });
    return this.db.system((tx) => insertOrganization(tx, trimmed));
  }

  async get(orgId: number): Promise<Organization> {
    // One statement: sent with the organization's setting in one message (Database.readOne).
    const org = (await this.db.readOne<Organization>(orgId, FIND_ORGANIZATION, [orgId])).rows[0];
    if (!org) throw new ApiError('not_found', `organization ${orgId} not found`);
    return org;
  }
}
