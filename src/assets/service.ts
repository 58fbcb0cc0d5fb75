import { randomUUID } from 'node:crypto';
import type { Database, Tx } from '../db/pool.js';
import { conflict, notFound } from '../errors.js';
import { isAutoKeyForm, lockKeyspace, nextAutoKey } from '../master-data/auto-key.js';
import { containsPattern, exclusivePair, listEnvelope, parseSort } from '../master-data/list-query.js';
import { enforceReadOnly } from '../master-data/read-only.js';
import { checkWindow, instantIn, windowError } from '../master-data/write-rules.js';
import { detachAllTags, type Owner, refreshTagValues } from '../tags/repository.js';
import { attachTags } from '../tags/service.js';
import {
  type AssetChanges,
  findLiveAsset,
  insertAsset,
  liveKeyHolder,
  setExternalKey,
  softDeleteAsset,
  updateAsset,
} from './repository.js';
import { listAssets } from './repository-list.js';
import { checkMetadata, readOnlyRules, rejectLocationOnCreate } from './rules.js';
import {
  ASSET_SORT_FIELDS,
  type Asset,
  type AssetCreate,
  type AssetListParams,
  type AssetUpdate,
} from './schemas.js';

const asset = (id: number): Owner => ({ kind: 'asset', id });

/** A database error of a write, as the API reports it; anything else is rethrown. */
function writeError(err: unknown, validFrom: string | null): unknown {
  const e = err as { code?: string; constraint?: string };
  if (e.code === '23514' && e.constraint === 'assets_window') return windowError(validFrom);
  if (e.code === '23505' && e.constraint === 'assets_external_key_live') {
    return conflict('external_key is already used by another live asset');
  }
  return err;
}

/** The assets resource (API-SPEC "Assets"), without HTTP: values in, Asset or ApiError out. */
export class AssetService {
  constructor(private readonly db: Database) {}

  async list(orgId: number, query: AssetListParams) {
    exclusivePair(query, 'location_id', 'location_external_key');
    const sort = parseSort(query.sort, ASSET_SORT_FIELDS);
    const { assets, total } = await this.db.withOrg(orgId, (tx) =>
      listAssets(tx, orgId, {
        locationIds: query.location_id,
        locationKeys: query.location_external_key,
        externalKeys: query.external_key,
        isActive: query.is_active,
        includeDeleted: query.include_deleted,
        searchPattern: query.q ? containsPattern(query.q) : undefined,
        sort,
        limit: query.limit,
        offset: query.offset,
      }),
    );
    return listEnvelope(assets, query, total);
  }

  /** A live asset, whatever its validity window. */
  async get(orgId: number, id: number): Promise<Asset> {
    const found = await this.db.withOrg(orgId, (tx) => findLiveAsset(tx, orgId, id));
    if (!found) throw notFound('asset');
    return found;
  }

  async create(orgId: number, body: AssetCreate): Promise<Asset> {
    rejectLocationOnCreate(body);
    if (body.metadata !== undefined) checkMetadata(body.metadata);
    const validFrom = body.valid_from === undefined ? null : instantIn('valid_from', body.valid_from);
    const validTo = body.valid_to == null ? null : instantIn('valid_to', body.valid_to);
    if (validFrom !== null) checkWindow(validFrom, validTo);

    const key = body.external_key;
    return this.db.withOrg(orgId, async (tx) => {
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
      const id = await insertAsset(tx, orgId, {
        external_key: key ?? `~pending-${randomUUID()}`,
        name: body.name,
        description: body.description ?? null,
        is_active: body.is_active ?? true,
        metadata: body.metadata ?? {},
        valid_from: validFrom,
        valid_to: validTo,
      }).catch((err) => {
        throw writeError(err, validFrom);
      });
      if (body.tags && body.tags.length > 0) await attachTags(tx, orgId, asset(id), body.tags);
      const created = await this.reload(tx, orgId, id);
      if (key !== undefined) return created;
      await lockKeyspace(tx, 'assets', orgId);
      const assigned = await nextAutoKey(tx, 'assets', orgId);
      // The key alone changes: updated_at stays the creation instant, as reloaded.
      await tx.query('UPDATE assets SET external_key = $3 WHERE org_id = $1 AND id = $2', [
        orgId,
        id,
        assigned,
      ]);
      return { ...created, external_key: assigned };
    });
  }

  async update(orgId: number, id: number, body: AssetUpdate): Promise<Asset> {
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

    return this.db.withOrg(orgId, async (tx) => {
      const current = await findLiveAsset(tx, orgId, id, { lock: true });
      if (!current) throw notFound('asset');
      enforceReadOnly(body, readOnlyRules(current));
      const validFrom = changes.valid_from ?? current.valid_from;
      checkWindow(validFrom, changes.valid_to === undefined ? current.valid_to : changes.valid_to);
      await updateAsset(tx, orgId, id, changes).catch((err) => {
        throw writeError(err, validFrom);
      });
      return this.reload(tx, orgId, id);
    });
  }

  /** Renaming to the current key changes nothing, updated_at included. */
  async rename(orgId: number, id: number, key: string): Promise<Asset> {
    return this.db.withOrg(orgId, async (tx) => {
      await lockKeyspace(tx, 'assets', orgId);
      const current = await findLiveAsset(tx, orgId, id, { lock: true });
      if (!current) throw notFound('asset');
      if (current.external_key === key) return current;
      const holder = await liveKeyHolder(tx, orgId, key, id);
      if (holder !== null) throw conflict(`external_key ${key} is already used by asset ${holder}`);
      await setExternalKey(tx, orgId, id, key).catch((err) => {
        throw writeError(err, null);
      });
      return this.reload(tx, orgId, id);
    });
  }

  /** Soft delete; the key is free at once and the tags are released with it. */
  async remove(orgId: number, id: number): Promise<void> {
    await this.db.withOrg(orgId, async (tx) => {
      if (!(await softDeleteAsset(tx, orgId, id))) throw notFound('asset');
      await detachAllTags(tx, orgId, asset(id));
      await refreshTagValues(tx, orgId, asset(id), false);
    });
  }

  private async reload(tx: Tx, orgId: number, id: number): Promise<Asset> {
    const found = await findLiveAsset(tx, orgId, id);
    if (!found) throw new Error(`asset ${id} vanished inside its own transaction`);
    return found;
  }
}
