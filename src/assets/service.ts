import { randomUUID } from 'node:crypto';
import type { Caller } from '../caller.js';
import { allInOneWrite, commitBehind, inOneWrite } from '../db/commit.js';
import type { Database, Tx } from '../db/pool.js';
import { conflict, notFound } from '../errors.js';
import { assetEvent, recordEvents, recordEventWithRowKey } from '../events/outbox.js';
import { toWire } from '../http/timestamps.js';
import { assignAutoKey, isAutoKeyForm, lockKeyspace } from '../master-data/auto-key.js';
import { KeyedLimiter } from '../master-data/keyed-limiter.js';
import {
  containsPattern,
  eachPageOnSnapshot,
  exclusivePair,
  listEnvelope,
  parseSort,
} from '../master-data/list-query.js';
import { enforceReadOnly } from '../master-data/read-only.js';
import { checkWindow, instantIn, windowError } from '../master-data/write-rules.js';
import { detachAllTags, type Owner, refreshTagValues, tagsForOwners } from '../tags/repository.js';
import { attachTags } from '../tags/service.js';
import {
  type AssetChanges,
  findLiveAsset,
  insertAsset,
  insertAssetWithAutoKey,
  liveKeyHolder,
  type NewAsset,
  readLiveAsset,
  setExternalKey,
  softDeleteAsset,
  toAsset,
  updateAsset,
} from './repository.js';
import { listAssets, listAssetsAtOnce } from './repository-list.js';
import { checkMetadata, READ_ONLY_FIELDS, readOnlyRules, rejectLocationOnCreate } from './rules.js';
import {
  ASSET_SORT_FIELDS,
  type Asset,
  type AssetCreate,
  type AssetListParams,
  type AssetUpdate,
} from './schemas.js';

const asset = (id: number): Owner => ({ kind: 'asset', id });

/**
 * Keyless creates of one organization let into the database at once by one instance (see
 * AssetService.keylessCreates): half the pool that serves them, and at least two (one
 * holding the keyspace lock, one queued behind it). Each waits on the lock holding a pooled
 * connection, and that pool also serves the organization's reads and its readers' messages.
 * Eight, the number when pools held twenty, could take every connection of today's default
 * six: beside a burst of creates from 24 connections, reads from 8 kept 7-13% of their rate
 * alone (p50 124-126 ms); with three in flight 43-50% (p50 16-21 ms), while the creates
 * made 220-261 req/s against eight's 376-427 (npm run bench:create-burst, docs/performance.md
 * "A burst of creates").
 */
export function keylessCreatesInFlight(poolSize: number): number {
  return Math.max(2, Math.floor(poolSize / 2));
}

/** A list query as the repository's filter (the pair rule checked, the sort parsed). */
function listFilter(query: AssetListParams) {
  exclusivePair(query, 'location_id', 'location_external_key');
  return {
    locationIds: query.location_id,
    locationKeys: query.location_external_key,
    externalKeys: query.external_key,
    isActive: query.is_active,
    includeDeleted: query.include_deleted,
    searchPattern: query.q ? containsPattern(query.q) : undefined,
    sort: parseSort(query.sort, ASSET_SORT_FIELDS),
    limit: query.limit,
    offset: query.offset,
  };
}

/** A database error of a write, as the API reports it; anything else is rethrown. */
function writeError(err: unknown, validFrom: string | null): unknown {
  const e = err as { code?: string; constraint?: string };
  if (e.code === '23514' && e.constraint === 'assets_window') return windowError(validFrom);
  if (e.code === '23505' && e.constraint === 'assets_external_key_live') {
    return conflict('external_key is already used by another live asset');
  }
  return err;
}

/** A create's values with the defaults of omitted fields; instants in wire form. */
function newValues(
  body: AssetCreate,
  validFrom: string | null,
  validTo: string | null,
): Omit<NewAsset, 'external_key'> {
  return {
    name: body.name,
    description: body.description ?? null,
    is_active: body.is_active ?? true,
    metadata: body.metadata ?? {},
    valid_from: validFrom,
    valid_to: validTo,
  };
}

/** A PATCH's event and the COMMIT in one write: one round trip fewer. Answers `asset`. */
async function updatedThenCommit(tx: Tx, orgId: number, asset: Asset): Promise<Asset> {
  await inOneWrite(tx, () => {
    const sent = recordEvents(tx, orgId, [assetEvent('asset.updated', asset)]);
    commitBehind(tx);
    return sent;
  });
  return asset;
}

/** The assets resource (API-SPEC "Assets"), without HTTP: values in, Asset or ApiError out. */
export class AssetService {
  /**
   * An organization's keyless creates take turns on its keyspace lock, each holding a
   * pooled connection while it waits. The lock is held for the slot's choice alone (the
   * rest of a create runs before it, and its flush after it): a few in flight keep it busy,
   * more would only starve the organization's reads and ingest of connections
   * (keylessCreatesInFlight).
   */
  private readonly keylessCreates: KeyedLimiter<number>;

  constructor(private readonly db: Database) {
    this.keylessCreates = new KeyedLimiter<number>(keylessCreatesInFlight(db.appPool.options.max ?? 10));
  }

  async list(orgId: number, query: AssetListParams) {
    const filter = listFilter(query);
    const { assets, total } =
      (await listAssetsAtOnce(this.db, orgId, filter)) ??
      (await this.db.readWithOrg(orgId, (tx) => listAssets(tx, orgId, filter), {
        // Without a text search the page is one named statement (buildListPageSql); a
        // search here is one whose page is planned for its pattern.
        genericPlans: filter.searchPattern === undefined,
      }));
    return listEnvelope(assets, query, total);
  }

  /** Every page of list(query), `pageSize` rows each, handed to `onPage` in order, on one snapshot. */
  listAll(
    orgId: number,
    query: Omit<AssetListParams, 'limit' | 'offset'>,
    pageSize: number,
    onPage: (assets: Asset[]) => Promise<void>,
  ): Promise<void> {
    const filter = listFilter({ ...query, limit: pageSize, offset: 0 });
    return eachPageOnSnapshot(
      this.db,
      orgId,
      { pageSize, genericPlans: filter.searchPattern === undefined },
      async (tx, offset) => (await listAssets(tx, orgId, { ...filter, offset })).assets,
      onPage,
    );
  }

  /** A live asset, whatever its validity window. */
  async get(orgId: number, id: number): Promise<Asset> {
    const found = await readLiveAsset(this.db, orgId, id);
    if (!found) throw notFound('asset');
    return found;
  }

  async create(caller: Caller, body: AssetCreate): Promise<Asset> {
    const orgId = caller.orgId;
    rejectLocationOnCreate(body);
    if (body.metadata !== undefined) checkMetadata(body.metadata);
    const validFrom = body.valid_from === undefined ? null : instantIn('valid_from', body.valid_from);
    const validTo = body.valid_to == null ? null : instantIn('valid_to', body.valid_to);
    if (validFrom !== null) checkWindow(validFrom, validTo);

    const key = body.external_key;
    if (key === undefined)
      return this.keylessCreates.run(orgId, () => this.insert(caller, body, validFrom, validTo));
    return this.insert(caller, body, validFrom, validTo);
  }

  private insert(caller: Caller, body: AssetCreate, validFrom: string | null, validTo: string | null) {
    const orgId = caller.orgId;
    const key = body.external_key;
    if (key === undefined && !body.tags?.length) return this.insertKeyless(caller, body, validFrom, validTo);
    return this.db.withOrg(caller, async (tx) => {
      // A key of the auto form (ASSET-NNNN) could be the slot a concurrent create without a
      // key is choosing: those take the keyspace lock first. Any other key is the unique
      // index's business alone, so creates with such keys never wait for each other.
      if (key !== undefined && isAutoKeyForm('assets', key)) await lockKeyspace(tx, 'assets', orgId);
      if (key !== undefined) {
        const holder = await liveKeyHolder(tx, orgId, key);
        if (holder !== null) throw conflict(`external_key ${key} is already used by asset ${holder}`);
      }
      // Without a key, the row goes in under a placeholder and the slot is chosen last, so
      // that the keyspace lock (which serialises the organization's keyless creates) is
      // held for the choice and the commit only, not for the whole create.
      const row = await insertAsset(tx, orgId, {
        external_key: key ?? `~pending-${randomUUID()}`,
        ...newValues(body, validFrom, validTo),
      }).catch((err) => {
        throw writeError(err, validFrom);
      });
      const id = row.id;
      // The row as inserted is the asset as read back, unless tags were attached after it.
      let created = toAsset(row, []);
      if (body.tags && body.tags.length > 0) {
        await attachTags(tx, orgId, asset(id), body.tags);
        created = await this.reload(tx, orgId, id);
      }
      if (key !== undefined) {
        await recordEvents(tx, orgId, [assetEvent('asset.created', created)]);
        return created;
      }
      // Under the keyspace lock only what must be: the lock, the slot's choice with the key
      // set (the key alone changes: updated_at stays the creation instant, as reloaded), the
      // event and the COMMIT leave in one write, so the lock is held for the server's work
      // alone, without a round trip to this process, and released before the COMMIT's WAL
      // flush, which the answer still waits for (releaseBeforeFlush, src/db/commit.ts).
      const assigned = await inOneWrite(tx, () => {
        const sent = Promise.all([
          lockKeyspace(tx, 'assets', orgId),
          assignAutoKey(tx, 'assets', orgId, id),
          recordEventWithRowKey(tx, orgId, assetEvent('asset.created', created), 'assets', id),
        ]);
        commitBehind(tx);
        return sent;
      });
      return { ...created, external_key: assigned[1] };
    });
  }

  /**
   * A create without key or tags in one round trip: the keyspace lock, the insert with the
   * chosen key and its event (insertAssetWithAutoKey) and the COMMIT leave in the opening's
   * write, so the lock is held for the server's work alone, and released before the
   * COMMIT's WAL flush, which the answer still waits for.
   */
  private insertKeyless(caller: Caller, body: AssetCreate, validFrom: string | null, validTo: string | null) {
    const orgId = caller.orgId;
    const values = newValues(body, validFrom, validTo);
    // The fields the row holds are set from it by the statement.
    const template: Asset = {
      id: 0,
      external_key: '',
      ...values,
      location_id: null,
      location_external_key: null,
      tags: [],
      valid_from: '',
      created_at: '',
      updated_at: '',
      deleted_at: null,
    };
    return this.db.withOrg(caller, async (tx) => {
      const [, row] = await allInOneWrite(tx, () => {
        const sent = [
          lockKeyspace(tx, 'assets', orgId),
          insertAssetWithAutoKey(tx, orgId, values, assetEvent('asset.created', template)).catch((err) => {
            throw writeError(err, validFrom);
          }),
        ] as const;
        commitBehind(tx);
        return sent;
      });
      return toAsset(row, []);
    });
  }

  async update(caller: Caller, id: number, body: AssetUpdate): Promise<Asset> {
    const orgId = caller.orgId;
    if (body.metadata !== undefined) checkMetadata(body.metadata);
    const changes: AssetChanges = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.description !== undefined) changes.description = body.description;
    if (body.is_active !== undefined) changes.is_active = body.is_active;
    if (body.metadata !== undefined) changes.metadata = body.metadata;
    if (body.valid_from !== undefined) changes.valid_from = instantIn('valid_from', body.valid_from);
    if (body.valid_to !== undefined) {
      changes.valid_to = body.valid_to === null ? null : instantIn('valid_to', body.valid_to);
    }

    const checked =
      changes.valid_from !== undefined || 'valid_to' in changes || READ_ONLY_FIELDS.some((f) => f in body);
    if (!checked) return this.updateUnchecked(caller, id, changes);
    return this.db.withOrg(caller, async (tx) => {
      const current = await findLiveAsset(tx, orgId, id, { lock: true });
      if (!current) throw notFound('asset');
      enforceReadOnly(body, readOnlyRules(current));
      const validFrom = changes.valid_from ?? current.valid_from;
      checkWindow(validFrom, changes.valid_to === undefined ? current.valid_to : changes.valid_to);
      const row = await updateAsset(tx, orgId, id, changes).catch((err) => {
        throw writeError(err, validFrom);
      });
      if (!row) throw new Error(`asset ${id} vanished under its row lock`);
      // The row as updated (triggers included); a PATCH does not touch the tags.
      const updated = toAsset(row, current.tags);
      return updatedThenCommit(tx, orgId, updated);
    });
  }

  /**
   * A PATCH with nothing to compare with the current values (no read-only field echoed, the
   * validity window untouched, so the stored one still holds): the update finds and locks
   * the row itself, and the tags the answer shows are read behind it in the same write. One
   * round trip fewer than reading the row first.
   */
  private updateUnchecked(caller: Caller, id: number, changes: AssetChanges): Promise<Asset> {
    const orgId = caller.orgId;
    return this.db.withOrg(caller, async (tx) => {
      const [row, tags] = await allInOneWrite(tx, () => [
        updateAsset(tx, orgId, id, changes).catch((err) => {
          throw writeError(err, null);
        }),
        tagsForOwners(tx, orgId, 'asset', [id]),
      ]);
      if (!row) throw notFound('asset');
      return updatedThenCommit(tx, orgId, toAsset(row, tags.get(id) ?? []));
    });
  }

  /** Renaming to the current key changes nothing, updated_at included. */
  async rename(caller: Caller, id: number, key: string): Promise<Asset> {
    const orgId = caller.orgId;
    return this.db.withOrg(caller, async (tx) => {
      await lockKeyspace(tx, 'assets', orgId);
      const current = await findLiveAsset(tx, orgId, id, { lock: true });
      if (!current) throw notFound('asset');
      if (current.external_key === key) return current;
      const holder = await liveKeyHolder(tx, orgId, key, id);
      if (holder !== null) throw conflict(`external_key ${key} is already used by asset ${holder}`);
      await setExternalKey(tx, orgId, id, key).catch((err) => {
        throw writeError(err, null);
      });
      const renamed = await this.reload(tx, orgId, id);
      await recordEvents(tx, orgId, [assetEvent('asset.updated', renamed)]);
      return renamed;
    });
  }

  /** Soft delete; the key is free at once and the tags are released with it. */
  async remove(caller: Caller, id: number): Promise<void> {
    const orgId = caller.orgId;
    await this.db.withOrg(caller, async (tx) => {
      // Read before the delete (which locks the row): the event shows what was deleted.
      const before = await findLiveAsset(tx, orgId, id);
      // Freeing an auto key's slot takes the keyspace lock (migration 0009's trigger): taken
      // here first, in the lock order (keyspace, rows). Taken by the trigger after the
      // delete's row lock, it deadlocked with a create or rename that held it and waited for
      // that row (or for its key in the unique index).
      if (before && isAutoKeyForm('assets', before.external_key)) await lockKeyspace(tx, 'assets', orgId);
      if (!before || !(await softDeleteAsset(tx, orgId, id))) throw notFound('asset');
      await detachAllTags(tx, orgId, asset(id));
      await refreshTagValues(tx, orgId, asset(id), false);
      const { rows } = await tx.query<{ deleted_at: Date }>(
        'SELECT deleted_at FROM assets WHERE org_id = $1 AND id = $2',
        [orgId, id],
      );
      const deletedAt = rows[0] ? toWire(rows[0].deleted_at) : null;
      // The tags it had (now released) stay in the payload: a receiver may key on them.
      await recordEvents(tx, orgId, [
        assetEvent('asset.deleted', {
          ...before,
          updated_at: deletedAt ?? before.updated_at,
          deleted_at: deletedAt,
        }),
      ]);
    });
  }

  private async reload(tx: Tx, orgId: number, id: number): Promise<Asset> {
    const found = await findLiveAsset(tx, orgId, id);
    if (!found) throw new Error(`asset ${id} vanished inside its own transaction`);
    return found;
  }
}
