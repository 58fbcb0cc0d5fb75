import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { api, type TreeNode } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { FieldMessage, FormAlert, FormErrors } from '../components/form-errors.js';
import { PageHeader } from '../components/page.js';
import { isEmpty, Pager, usePaged } from '../components/paging.js';
import { submitting, useAction } from '../components/use-action.js';
import { plural } from '../format.js';
import { touchesLocations, useLiveRefresh } from '../live.js';
import { Link } from '../router.js';
import { useCan } from '../session.js';
import { hrefWith, setParams, useParams, useSearchParam } from '../url-state.js';
import type { LocationDetails, LocationRecord, TreeHit } from './location-api.js';
import { LocationPanel } from './location-details.js';

/**
 * The location tree, a level and a page at a time (children are fetched when a node is
 * opened, so 10,000 locations cost one page), a server-side search by name or key, and
 * the selected location's panel. Selection, search and the page are in the URL.
 */

const LEVEL_LIMIT = 50;

/** Bumped after every write, so each open level fetches its page again. */
const TreeVersion = createContext(0);

/** Ancestors of the selected location, root first, as "1/5/9": opened so a reload shows it in place. */
const OpenPath = createContext('');

function Level({
  parentId,
  label,
  selected,
}: {
  parentId: number | null;
  label: string;
  selected: number | null;
}) {
  const version = useContext(TreeVersion);
  const level = usePaged<TreeNode>(
    '/internal/locations/tree',
    parentId === null ? {} : { parent_id: parentId },
    LEVEL_LIMIT,
    { urlPage: parentId === null },
  );
  const { reload } = level;
  useEffect(() => {
    if (version > 0) reload();
  }, [version, reload]);
  return (
    <>
      <ErrorAlert error={level.error} />
      {level.loading && level.rows.length === 0 && <p class="muted">Loading…</p>}
      {isEmpty(level) && parentId === null && (
        <p class="empty">No locations yet. Create the first one with the form above.</p>
      )}
      <ul class={parentId === null ? 'tree' : 'tree-children'}>
        {level.rows.map((node) => (
          <Node key={node.id} node={node} selected={selected} />
        ))}
      </ul>
      {(parentId === null || level.total > LEVEL_LIMIT) && <Pager paged={level} label={label} />}
    </>
  );
}

function NodeLabel({ node, selected }: { node: TreeNode; selected: number | null }) {
  return (
    <>
      <Link
        href={hrefWith({ selected: node.id })}
        class="tree-name"
        aria-current={selected === node.id ? 'true' : undefined}
      >
        {node.name}
      </Link>
      <span class="mono muted tree-key">{node.external_key}</span>
      {node.asset_count === 0 ? (
        <span class="count zero">0 assets</span>
      ) : (
        // The count leads to the assets: the location's panel lists them, each linked to its page.
        <Link href={hrefWith({ selected: node.id })} class="count">
          {plural(node.asset_count, 'asset')}
          <span class="visually-hidden"> at {node.name}</span>
        </Link>
      )}
    </>
  );
}

function Node({ node, selected }: { node: TreeNode; selected: number | null }) {
  const openPath = useContext(OpenPath);
  const onPath = openPath.split('/').includes(String(node.id));
  const [open, setOpen] = useState(onPath);
  useEffect(() => {
    if (onPath) setOpen(true);
  }, [onPath, openPath]);
  const childrenId = `tree-${node.id}-children`;
  return (
    <li class={`tree-node${selected === node.id ? ' selected' : ''}`}>
      <div class="tree-row">
        {node.child_count > 0 ? (
          <button
            type="button"
            class="tree-toggle"
            aria-expanded={open}
            aria-controls={childrenId}
            aria-label={`Sub-locations of ${node.name} (${node.child_count})`}
            onClick={() => setOpen(!open)}
          >
            <span class="chevron" aria-hidden="true">
              ▸
            </span>
          </button>
        ) : (
          <span class="tree-spacer" aria-hidden="true" />
        )}
        <NodeLabel node={node} selected={selected} />
      </div>
      {open && (
        <div id={childrenId}>
          <Level parentId={node.id} label={`Sub-locations of ${node.name}`} selected={selected} />
        </div>
      )}
    </li>
  );
}

function SearchResults({ q, selected }: { q: string; selected: number | null }) {
  const version = useContext(TreeVersion);
  const hits = usePaged<TreeHit>('/internal/locations/tree/search', { q }, LEVEL_LIMIT, { urlPage: true });
  const { reload } = hits;
  useEffect(() => {
    if (version > 0) reload();
  }, [version, reload]);
  return (
    <>
      <ErrorAlert error={hits.error} />
      {isEmpty(hits) && <p class="empty">No location's name or key contains “{q}”.</p>}
      <ul class="tree search-hits">
        {hits.rows.map((hit) => (
          <li key={hit.id} class={`tree-node${selected === hit.id ? ' selected' : ''}`}>
            <div class="tree-row">
              <NodeLabel node={hit} selected={selected} />
            </div>
            {hit.path.length > 0 && <p class="hint hit-path">in {hit.path.join(' › ')}</p>}
          </li>
        ))}
      </ul>
      <Pager paged={hits} label="Matching locations" />
    </>
  );
}

/** The fields the new-location form has an input for. */
const CREATE_FIELDS = new Set(['name', 'external_key', 'description']);

function CreateLocation({
  selected,
  onCreated,
}: {
  selected: { id: number; name: string } | null;
  onCreated(l: LocationRecord): void;
}) {
  const [name, setName] = useState('');
  const [key, setKey] = useState('');
  const [description, setDescription] = useState('');
  const [under, setUnder] = useState(true);

  const { run, busy, error } = useAction(async () => {
    const body: Record<string, unknown> = { name };
    if (key.trim()) body.external_key = key.trim();
    if (description.trim()) body.description = description;
    if (selected && under) body.parent_id = selected.id;
    const res = await api<{ data: LocationRecord }>('/internal/locations', { method: 'POST', body });
    setName('');
    setKey('');
    setDescription('');
    onCreated(res.data);
  });
  // Each field's message under its field, as on the asset form (a bad key said so only
  // in an alert above the button, and the input was not marked).
  const errors = new FormErrors(error, (field) => CREATE_FIELDS.has(field));

  return (
    <form class="card" onSubmit={submitting(run)} aria-labelledby="create-location-title">
      <h2 id="create-location-title">New location</h2>
      <div class="row">
        <div class="field">
          <label for="new-location-name">Name</label>
          <input
            id="new-location-name"
            required
            value={name}
            {...errors.input('name', 'new-location-name')}
            onInput={(e) => setName(e.currentTarget.value)}
          />
          <FieldMessage errors={errors} field="name" id="new-location-name" />
        </div>
        <div class="field">
          <label for="new-location-key">External key</label>
          <input
            id="new-location-key"
            class="mono"
            value={key}
            {...errors.input('external_key', 'new-location-key', 'new-location-key-hint')}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
          <p class="hint" id="new-location-key-hint">
            Optional: left empty, the next free LOC-NNNN is used.
          </p>
          <FieldMessage errors={errors} field="external_key" id="new-location-key" />
        </div>
      </div>
      <div class="field">
        <label for="new-location-description">Description</label>
        <input
          id="new-location-description"
          value={description}
          {...errors.input('description', 'new-location-description')}
          onInput={(e) => setDescription(e.currentTarget.value)}
        />
        <FieldMessage errors={errors} field="description" id="new-location-description" />
      </div>
      <fieldset class="radio-group inline">
        <legend>Place it</legend>
        <label class="radio">
          <input
            type="radio"
            name="new-location-parent"
            checked={!selected || !under}
            onChange={() => setUnder(false)}
          />
          At the top level
        </label>
        {selected && (
          <label class="radio">
            <input type="radio" name="new-location-parent" checked={under} onChange={() => setUnder(true)} />
            Under {selected.name}
          </label>
        )}
      </fieldset>
      <FormAlert errors={errors} />
      <button type="submit" class="button primary" disabled={busy}>
        Create location
      </button>
    </form>
  );
}

export function LocationsPage() {
  const can = useCan();
  const params = useParams();
  const search = useSearchParam();
  const selectedId = Number.parseInt(params.get('selected') ?? '', 10);
  const selected = Number.isFinite(selectedId) && selectedId > 0 ? selectedId : null;
  const [version, setVersion] = useState(0);
  const [selectedName, setSelectedName] = useState<{ id: number; name: string } | null>(null);
  const [openPath, setOpenPath] = useState('');
  const treeChanged = () => setVersion((v) => v + 1);
  // Reads move assets between locations: the counts follow, the open levels and the selection stay.
  useLiveRefresh(treeChanged, touchesLocations);

  useEffect(() => {
    if (selected === null) {
      setSelectedName(null);
      return;
    }
    let live = true;
    api<LocationDetails>(`/internal/locations/${selected}`)
      .then((d) => {
        if (!live) return;
        setSelectedName({ id: d.data.id, name: d.data.name });
        setOpenPath(d.path.map((p) => p.id).join('/'));
      })
      .catch(() => live && setSelectedName(null));
    return () => {
      live = false;
    };
  }, [selected, version]);

  return (
    <main id="main">
      <PageHeader title="Locations" />
      <p class="lead">
        Each location with the number of assets placed there now (not counting sub-locations). Open a location
        to see what it contains; choose its name to{' '}
        {can('editor') ? 'edit, move, rename or delete it' : 'see its details'}.
      </p>
      <TreeVersion.Provider value={version}>
        <OpenPath.Provider value={openPath}>
          <div class="locations-layout">
            <div class="locations-tree">
              {can('editor') && (
                <CreateLocation
                  // Only the selected location's own name: the previous selection's, until the
                  // new one's details answer, would offer "Under <the previous one>" and put the
                  // new location there.
                  selected={selectedName?.id === selected ? selectedName : null}
                  onCreated={(l) => {
                    treeChanged();
                    setParams({ selected: l.id });
                  }}
                />
              )}
              <div class="card">
                <form class="search" onSubmit={(e) => e.preventDefault()}>
                  <label for="location-search">Search locations</label>
                  <input
                    id="location-search"
                    type="search"
                    value={search.value}
                    autocomplete="off"
                    aria-describedby="location-search-hint"
                    onInput={(e) => search.setValue(e.currentTarget.value)}
                  />
                  <p class="hint" id="location-search-hint">
                    By name or key, at any depth.
                  </p>
                </form>
                {search.query ? (
                  <SearchResults q={search.query} selected={selected} />
                ) : (
                  <Level parentId={null} label="Top-level locations" selected={selected} />
                )}
              </div>
            </div>
            {selected !== null && (
              <div class="locations-panel">
                <LocationPanel
                  key={selected}
                  id={selected}
                  onTreeChanged={treeChanged}
                  onDeleted={() => {
                    treeChanged();
                    setParams({ selected: null });
                  }}
                />
              </div>
            )}
          </div>
        </OpenPath.Provider>
      </TreeVersion.Provider>
    </main>
  );
}
