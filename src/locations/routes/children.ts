import type { LocationService } from '../service.js';
import type { LocationApp } from './common.js';
import { treeRoute } from './tree.js';

export function childrenRoute(app: LocationApp, locations: LocationService): void {
  treeRoute(app, locations, {
    suffix: 'children',
    operationId: 'listLocationChildren',
    summary: "A location's direct children",
    order: 'By name ascending (byte-wise), id ascending breaking ties.',
    list: (s) => s.children.bind(s),
  });
}
