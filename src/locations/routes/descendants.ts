import type { LocationService } from '../service.js';
import type { LocationApp } from './common.js';
import { treeRoute } from './tree.js';

export function descendantsRoute(app: LocationApp, locations: LocationService): void {
  treeRoute(app, locations, {
    suffix: 'descendants',
    operationId: 'listLocationDescendants',
    summary: "A location's descendants at every depth",
    order:
      'Depth-first tree order: each location is followed by its subtree, and the children of one parent come by lowercased external_key, id ascending breaking ties.',
    list: (s) => s.descendants.bind(s),
  });
}
