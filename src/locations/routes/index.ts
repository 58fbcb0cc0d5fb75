import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { LocationService } from '../service.js';
import { ancestorsRoute } from './ancestors.js';
import { childrenRoute } from './children.js';
import { createLocationRoute } from './create.js';
import { deleteLocationRoute } from './delete.js';
import { descendantsRoute } from './descendants.js';
import { getLocationRoute } from './get.js';
import { listLocationsRoute } from './list.js';
import { renameLocationRoute } from './rename.js';
import { updateLocationRoute } from './update.js';

export { LocationSchema } from '../schemas.js';

/** The locations resource (API-SPEC "Locations"); the tags sub-resource lives in src/tags. */
export const locationRoutes =
  (locations: LocationService): FastifyPluginAsyncTypebox =>
  async (app) => {
    listLocationsRoute(app, locations);
    createLocationRoute(app, locations);
    getLocationRoute(app, locations);
    updateLocationRoute(app, locations);
    deleteLocationRoute(app, locations);
    renameLocationRoute(app, locations);
    ancestorsRoute(app, locations);
    childrenRoute(app, locations);
    descendantsRoute(app, locations);
  };
