import { useState } from 'preact/hooks';
import type { TreeNode } from '../api.js';
import { ErrorAlert } from '../components/errors.js';
import { PageHeader } from '../components/page.js';
import { Pager, usePaged } from '../components/paging.js';
import { plural } from '../format.js';

const LEVEL_LIMIT = 50;

/** One level of the tree: a page of children of `parentId` (roots when null). */
function Level({ parentId, label }: { parentId: number | null; label: string }) {
  const level = usePaged<TreeNode>(
    '/internal/locations/tree',
    parentId === null ? {} : { parent_id: parentId },
    LEVEL_LIMIT,
  );
  return (
    <>
      <ErrorAlert error={level.error} />
      {level.loading && level.rows.length === 0 && <p class="muted">Loading…</p>}
      {!level.loading && level.rows.length === 0 && parentId === null && !level.error && (
        <p class="empty">No locations yet. Create them through the API (POST /api/v1/locations).</p>
      )}
      <ul class={parentId === null ? 'tree' : 'tree-children'}>
        {level.rows.map((node) => (
          <Node key={node.id} node={node} />
        ))}
      </ul>
      {(parentId === null || level.total > LEVEL_LIMIT) && <Pager paged={level} label={label} />}
    </>
  );
}

function Node({ node }: { node: TreeNode }) {
  const [open, setOpen] = useState(false);
  const childrenId = `tree-${node.id}-children`;
  const count = (
    <span class={`count${node.asset_count === 0 ? ' zero' : ''}`}>{plural(node.asset_count, 'asset')}</span>
  );
  return (
    <li class="tree-node">
      <div class="tree-row">
        {node.child_count > 0 ? (
          <button
            type="button"
            class="tree-toggle"
            aria-expanded={open}
            aria-controls={childrenId}
            onClick={() => setOpen(!open)}
          >
            <span class="chevron" aria-hidden="true">
              ▸
            </span>
            <span class="tree-name">{node.name}</span>
            <span class="visually-hidden">, {plural(node.child_count, 'sub-location')}</span>
          </button>
        ) : (
          <span class="tree-leaf">
            <span class="tree-name">{node.name}</span>
          </span>
        )}
        <span class="mono muted tree-key">{node.external_key}</span>
        {count}
      </div>
      {open && (
        <div id={childrenId}>
          <Level parentId={node.id} label={`Sub-locations of ${node.name}`} />
        </div>
      )}
    </li>
  );
}

export function LocationsPage() {
  return (
    <main id="main">
      <PageHeader title="Locations" />
      <p class="lead">
        Each location with the number of assets placed there now (not counting sub-locations). Expand a
        location to see what it contains.
      </p>
      <div class="card">
        <Level parentId={null} label="Top-level locations" />
      </div>
    </main>
  );
}
