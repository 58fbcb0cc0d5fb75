import type { LocationService } from '../service.js';
import type { LocationApp } from './common.js';
import { treeRoute } from './tree.js';

export function ancestorsRoute(app: LocationApp, locations: LocationService): void {
  treeRoute(app, locations, {
    suffix: 'ancestors',
    operationId: 'listLocationAncestors',
    summary: "A location's ancestors",
    order: 'Root first, down to the parent; id ascending breaks ties.',
    list: (s) => s.ancestors.bind(s),
  });
}
