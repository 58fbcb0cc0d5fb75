import { type Config, loadConfig } from '../config.js';
import type { Services } from '../services.js';
import { createCliServices, openCliDatabase } from './open.js';

/** Runs `fn` with the services on the configured database, closing everything after. */
export async function withServices<T>(fn: (services: Services, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const opened = await openCliDatabase(config, { poolSize: 2 });
  try {
    const services = await createCliServices(opened.db, config);
    try {
      return await fn(services, config);
    } finally {
      await services.close();
    }
  } finally {
    await opened.close();
  }
}

/**
 * `withServices` for a command of one organization (`--org`): a missing organization is
 * refused before the command runs. Row-level security hides the rows of an organization
 * that does not exist, so without this check a list printed nothing, an export only its
 * header, a dry run counted every row as new, and a write failed on a foreign key with a
 * message that blamed a concurrent request.
 */
export function withOrganization<T>(
  orgId: number,
  fn: (services: Services, config: Config) => Promise<T>,
): Promise<T> {
  return withServices(async (services, config) => {
    await services.organizations.get(orgId);
    return fn(services, config);
  });
}
