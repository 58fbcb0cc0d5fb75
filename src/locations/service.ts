import type { Caller } from '../caller.js';
import { allInOneWrite } from '../db/commit.js';
import type { Database, Tx } from '../db/pool.js';
import { conflict, notFound } from '../errors.js';
import { locationEvent, recordEvents } from '../events/outbox.js';
import { toWire } from '../http/timestamps.js';
import { lockKeyspace, nextAutoKey } from '../master-data/auto-key.js';
import { eachPageOnSnapshot, exclusivePair, parseSort } from '../master-data/list-query.js';
import {
  enforceReadOnly,
  type ReadOnlyRule,
  readOnlyDiffer,
  staleUpdatedAt,
} from '../master-data/read-only.js';
import { millisIn, windowError } from '../master-data/write-rules.js';
import { detachAllTags, refreshTagValues } from '../tags/repository.js';
import { attachTags } from '../tags/service.js';
import type { LocationCreateInput, LocationListInput, LocationUpdateInput } from './inputs.js';
import { assertNoCycle, namesParentRow, resolveParent, sendsParent } from './parent.js';
import {
  countLiveChildren,
  countPlacedAssets,
  dbNow,
  findLiveIdByKey,
  findLiveLocation,
  hasSearch,
  insertLocation,
  type LocationChanges,
  listLocations,
  liveLocationExists,
  lockTree,
  renameLocation,
  SORT_FIELDS,
  softDeleteLocation,
  updateLocation,
} from './repository.js';
import {
  ancestorChain,
  countLiveDescendants,
  listAncestors,
  listChildren,
  listDescendants,
  type Page,
  type PagedLocations,
} from './repository-tree.js';
import type { Location } from './schemas.js';

export type { LocationCreateInput, LocationListInput, LocationUpdateInput } from './inputs.js';

/** A location event in the write's transaction; answers the location for the caller to return. */
async function recordLocationEvent(
  tx: Tx,
  orgId: number,
  type: Parameters<typeof locationEvent>[0],
  location: Location,
): Promise<Location> {
  await recordEvents(tx, orgId, [locationEvent(type, location)]);
  return location;
}

const isUniqueViolation = (err: unknown, constraint: string) =>
  (err as { code?: string; constraint?: string }).code === '23505' &&
  (err as { constraint?: string }).constraint === constraint;

const keyTaken = (key: string, holder?: number) =>
  conflict(
    `external_key ${key} is already used by ${holder ? `location ${holder}` : 'another live location'}`,
  );

/** 409 naming the holder: one outside its window is in no list, so only its id reaches it. */
async function assertKeyFree(tx: Tx, orgId: number, key: string): Promise<void> {
  const holder = await findLiveIdByKey(tx, orgId, key);
  if (holder !== null) throw keyTaken(key, holder);
}

function assertWindow(validFrom: number, validTo: number | null): void {
  if (validTo !== null && validTo <= validFrom) throw windowError(toWire(validFrom));
}

/** PATCH's accept-if-matches rules for the location read shape (API-SPEC Location write rules). */
function readOnlyRules(current: Location): ReadOnlyRule[] {
  const path = `/api/v1/locations/${current.id}`;
  return [
    { field: 'id', compare: 'scalar', current: current.id, onDiffer: readOnlyDiffer('id') },
    {
      field: 'created_at',
      compare: 'instant',
      current: current.created_at,
      onDiffer: readOnlyDiffer('created_at'),
    },
    {
      field: 'updated_at',
      compare: 'instant',
      current: current.updated_at,
      onDiffer: staleUpdatedAt(current.updated_at),
    },
    {
      field: 'deleted_at',
      compare: 'instant',
      current: current.deleted_at,
      onDiffer: readOnlyDiffer('deleted_at'),
    },
    {
      field: 'external_key',
      compare: 'scalar',
      current: current.external_key,
      onDiffer: () => ({
        code: 'invalid_context',
        message:
          'external_key cannot be changed with PATCH; use POST /api/v1/locations/{location_id}/rename with body {"external_key": "<new key>"}',
        params: { endpoint: `POST ${path}/rename`, body: { external_key: '<new key>' } },
      }),
    },
    {
      field: 'tags',
      compare: 'tags',
      current: current.tags,
      onDiffer: () => ({
        code: 'invalid_context',
        message:
          'tags cannot be changed with PATCH; use the tags sub-resource: POST /api/v1/locations/{location_id}/tags to attach, DELETE /api/v1/locations/{location_id}/tags/{tag_id} to detach',
        params: { endpoint: `${path}/tags` },
      }),
    },
  ];
}

/** A list query as the repository's filter (the pair rule checked, the sort parsed). */
function listFilter(query: LocationListInput) {
  exclusivePair(query, 'parent_id', 'parent_external_key');
  return {
    parent_id: query.parent_id,
    parent_external_key: query.parent_external_key,
    external_key: query.external_key,
    is_active: query.is_active,
    include_deleted: query.include_deleted ?? false,
    q: query.q,
    sort: parseSort(query.sort, SORT_FIELDS),
    limit: query.limit,
    offset: query.offset,
  };
}

/** The locations resource: master data with a hierarchy. No HTTP here. */
export class LocationService {
  constructor(private readonly db: Database) {}

  list(orgId: number, query: LocationListInput): Promise<PagedLocations> {
    const filter = listFilter(query);
    return this.db.readWithOrg(
      orgId,
      (tx) => listLocations(tx, orgId, filter),
      // Generic plans for the named statements of a list without q (listLocations).
      { genericPlans: !hasSearch(query) },
    );
  }

  /** Every page of list(query), `pageSize` rows each, handed to `onPage` in order, on one snapshot. */
  listAll(
    orgId: number,
    query: Omit<LocationListInput, 'limit' | 'offset'>,
    pageSize: number,
    onPage: (locations: Location[]) => Promise<void>,
  ): Promise<void> {
    const filter = listFilter({ ...query, limit: pageSize, offset: 0 });
    return eachPageOnSnapshot(
      this.db,
      orgId,
      { pageSize, genericPlans: !hasSearch(query) },
      async (tx, offset) => (await listLocations(tx, orgId, { ...filter, offset })).data,
      onPage,
    );
  }

  /** A live location, whatever its validity window (the temporal filter is for lists). */
  get(orgId: number, id: number): Promise<Location> {
    return this.db.readWithOrg(orgId, (tx) => this.mustFind(tx, orgId, id));
  }

  create(caller: Caller, body: LocationCreateInput): Promise<Location> {
    const orgId = caller.orgId;
    const validFrom = body.valid_from === undefined ? undefined : millisIn('valid_from', body.valid_from);
    const validTo = body.valid_to == null ? null : millisIn('valid_to', body.valid_to);
    return this.db.withOrg(caller, async (tx) => {
      await lockKeyspace(tx, 'locations', orgId);
      if (namesParentRow(body)) await lockTree(tx, orgId);
      const now = await dbNow(tx);
      assertWindow(validFrom ?? now.getTime(), validTo);
      const parentId = (await resolveParent(tx, orgId, body)) ?? null;
      let key = body.external_key;
      if (key === undefined) key = await nextAutoKey(tx, 'locations', orgId);
      else await assertKeyFree(tx, orgId, key);
      const id = await insertLocation(tx, orgId, {
        external_key: key,
        name: body.name,
        description: body.description ?? null,
        is_active: body.is_active ?? true,
        parent_id: parentId,
        valid_from: toWire(validFrom ?? now),
        valid_to: validTo === null ? null : toWire(validTo),
        now,
      }).catch((err: unknown) => {
        throw isUniqueViolation(err, 'locations_external_key_live') ? keyTaken(key) : err;
      });
      if (body.tags && body.tags.length > 0) await attachTags(tx, orgId, { kind: 'location', id }, body.tags);
      return recordLocationEvent(tx, orgId, 'location.created', await this.mustFind(tx, orgId, id));
    });
  }

  update(caller: Caller, id: number, body: LocationUpdateInput): Promise<Location> {
    const orgId = caller.orgId;
    return this.db.withOrg(caller, async (tx) => {
      const moves = sendsParent(body);
      if (moves) await lockTree(tx, orgId);
      const current = await this.mustFind(tx, orgId, id, true);
      enforceReadOnly(body as Record<string, unknown>, readOnlyRules(current));

      const changes: LocationChanges = {};
      if (body.name !== undefined) changes.name = body.name;
      if (body.description !== undefined) changes.description = body.description;
      if (body.is_active !== undefined) changes.is_active = body.is_active;
      const validFrom = body.valid_from === undefined ? undefined : millisIn('valid_from', body.valid_from);
      const validTo =
        body.valid_to === undefined
          ? undefined
          : body.valid_to === null
            ? null
            : millisIn('valid_to', body.valid_to);
      if (validFrom !== undefined) changes.valid_from = toWire(validFrom);
      if (validTo !== undefined) changes.valid_to = validTo === null ? null : toWire(validTo);
      assertWindow(
        validFrom ?? Date.parse(current.valid_from),
        validTo === undefined ? (current.valid_to === null ? null : Date.parse(current.valid_to)) : validTo,
      );

      if (moves) {
        const parentId = (await resolveParent(tx, orgId, body)) ?? null;
        if (parentId !== null && parentId !== current.parent_id)
          await assertNoCycle(tx, orgId, current, parentId);
        changes.parent_id = parentId;
      }
      await updateLocation(tx, orgId, id, changes);
      return recordLocationEvent(tx, orgId, 'location.updated', await this.mustFind(tx, orgId, id));
    });
  }

  /**
   * Soft delete. Refused (409, no cascade) while live child locations or live assets
   * placed directly at it exist; releases its tags so their values can be reused.
   */
  delete(caller: Caller, id: number): Promise<void> {
    const orgId = caller.orgId;
    return this.db.withOrg(caller, async (tx) => {
      // Freeing an auto key's slot takes the keyspace lock (migration 0009's trigger): taken
      // here first, in the lock order (keyspace, tree), or a create under a parent that
      // holds the keyspace lock and waits for the tree would deadlock with this delete.
      await lockKeyspace(tx, 'locations', orgId);
      await lockTree(tx, orgId);
      const location = await this.mustFind(tx, orgId, id, true);
      const children = await countLiveChildren(tx, orgId, id);
      if (children > 0) {
        throw conflict(
          `location ${location.external_key} has ${children} child location(s); move or delete them first (no cascade)`,
        );
      }
      const assets = await countPlacedAssets(tx, orgId, id);
      if (assets > 0) {
        throw conflict(
          `location ${location.external_key} has ${assets} asset(s) placed at it; it cannot be deleted while they are there`,
        );
      }
      await softDeleteLocation(tx, orgId, id);
      const owner = { kind: 'location' as const, id };
      await detachAllTags(tx, orgId, owner);
      await refreshTagValues(tx, orgId, owner, false);
      const { rows } = await tx.query<{ deleted_at: Date }>(
        'SELECT deleted_at FROM locations WHERE org_id = $1 AND id = $2',
        [orgId, id],
      );
      const deletedAt = rows[0] ? toWire(rows[0].deleted_at) : null;
      await recordLocationEvent(tx, orgId, 'location.deleted', {
        ...location,
        updated_at: deletedAt ?? location.updated_at,
        deleted_at: deletedAt,
      });
    });
  }

  /**
   * Changes only this row's external_key (descendants are not modified) and reports how
   * many live descendants it has. The current value is a no-op that keeps updated_at.
   */
  rename(caller: Caller, id: number, key: string): Promise<{ location: Location; descendants: number }> {
    const orgId = caller.orgId;
    return this.db.withOrg(caller, async (tx) => {
      await lockKeyspace(tx, 'locations', orgId);
      let location = await this.mustFind(tx, orgId, id, true);
      if (location.external_key !== key) {
        await assertKeyFree(tx, orgId, key);
        await renameLocation(tx, orgId, id, key).catch((err: unknown) => {
          throw isUniqueViolation(err, 'locations_external_key_live') ? keyTaken(key) : err;
        });
        location = await recordLocationEvent(
          tx,
          orgId,
          'location.updated',
          await this.mustFind(tx, orgId, id),
        );
      }
      return { location, descendants: await countLiveDescendants(tx, orgId, id) };
    });
  }

  /**
   * A live location with what a rename would report (its live descendants, counted as
   * rename counts them) and its path from the root: the web app's details view.
   */
  details(
    orgId: number,
    id: number,
  ): Promise<{
    location: Location;
    descendants: number;
    path: { id: number; external_key: string; name: string }[];
  }> {
    return this.db.withOrg(orgId, async (tx) => {
      const location = await this.mustFind(tx, orgId, id);
      const chain = await ancestorChain(tx, orgId, id);
      const path = chain
        .slice(1)
        .reverse()
        .map(({ id, external_key, name }) => ({ id, external_key, name }));
      return { location, descendants: await countLiveDescendants(tx, orgId, id), path };
    });
  }

  ancestors(orgId: number, id: number, page: Page): Promise<PagedLocations> {
    return this.tree(orgId, id, page, listAncestors);
  }

  children(orgId: number, id: number, page: Page): Promise<PagedLocations> {
    return this.tree(orgId, id, page, listChildren);
  }

  descendants(orgId: number, id: number, page: Page): Promise<PagedLocations> {
    return this.tree(orgId, id, page, listDescendants);
  }

  private tree(
    orgId: number,
    id: number,
    page: Page,
    list: (tx: Tx, orgId: number, id: number, page: Page) => Promise<PagedLocations>,
  ): Promise<PagedLocations> {
    return this.db.readWithOrg(orgId, async (tx) => {
      // The walk does not depend on the check, so both leave in one write: a round trip
      // fewer for every found location; the walk from a missing one is thrown away.
      const [exists, found] = await allInOneWrite(
        tx,
        () => [liveLocationExists(tx, orgId, id), list(tx, orgId, id, page)] as const,
      );
      if (!exists) throw notFound('location');
      return found;
    });
  }

  private async mustFind(tx: Tx, orgId: number, id: number, lock = false): Promise<Location> {
    const location = await findLiveLocation(tx, orgId, id, lock);
    if (!location) throw notFound('location');
    return location;
  }
}
