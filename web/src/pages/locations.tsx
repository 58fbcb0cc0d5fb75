import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { api, type TreeNode } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { PageHeader } from '../components/page.js';
import { isEmpty, Pager, usePaged } from '../components/paging.js';
import { plural } from '../format.js';
import { touchesLocations, useLiveRefresh } from '../live.js';
import { Link } from '../router.js';
import { useCan } from '../session.js';
import { hrefWith, setParams, useParams, useSearchParam } from '../url-state.js';
import type { LocationDetails, TreeHit } from './location-api.js';
import { CreateLocation } from './location-create.js';
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
