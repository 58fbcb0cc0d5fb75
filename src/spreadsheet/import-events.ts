import { ASSET_COLUMNS, type AssetRow, LOCATION_JOIN, withTags } from '../assets/repository.js';
import type { Tx } from '../db/pool.js';
import { assetEvent, locationEvent, type NewEvent, recordEvents } from '../events/outbox.js';
import { COLUMNS, hydrate, type LocationRow, PARENT_JOIN } from '../locations/repository.js';
import type { Kind } from './columns.js';
import type { BaseWrite } from './pipeline.js';
import { inBatches } from './rows.js';

/**
 * The master-data events of an import's writes, in its transaction, as the API's own
 * writes record them: `asset.created` / `asset.updated` (or `location.*`) with the
 * resource as the API returns it after the import, its tags included. A tag change is
 * told by its record's `*.updated`, as an asset created with tags is by `asset.created`.
 */
export async function recordImportEvents(
  tx: Tx,
  orgId: number,
  kind: Kind,
  writes: BaseWrite[],
): Promise<void> {
  const outcomes = new Map<number, 'create' | 'update'>();
  for (const w of writes) {
    if (w.id === null) continue;
    if (w.result.outcome === 'create' || w.result.outcome === 'update') outcomes.set(w.id, w.result.outcome);
  }
  const verb = (id: number) => (outcomes.get(id) === 'create' ? 'created' : 'updated');
  await inBatches(
    [...outcomes.keys()],
    async (ids) => {
      let events: NewEvent[];
      if (kind === 'assets') {
        const { rows } = await tx.query<AssetRow>(
          `SELECT ${ASSET_COLUMNS} FROM assets a ${LOCATION_JOIN}
           WHERE a.org_id = $1 AND a.id = ANY($2::bigint[]) ORDER BY a.id`,
          [orgId, ids],
        );
        events = (await withTags(tx, orgId, rows)).map((a) => assetEvent(`asset.${verb(a.id)}`, a));
      } else {
        const { rows } = await tx.query<LocationRow>(
          `SELECT ${COLUMNS} FROM locations l ${PARENT_JOIN}
           WHERE l.org_id = $1 AND l.id = ANY($2::bigint[]) ORDER BY l.id`,
          [orgId, ids],
        );
        events = (await hydrate(tx, orgId, rows)).map((l) => locationEvent(`location.${verb(l.id)}`, l));
      }
      await recordEvents(tx, orgId, events);
    },
    () => undefined,
  );
}
