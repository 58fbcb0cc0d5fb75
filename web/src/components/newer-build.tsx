import { useEffect, useState } from 'preact/hooks';
import { newerBuild, onNewerBuild } from '../build.js';

/**
 * Shown once the service serves another build of the web app than this page runs (an
 * upgrade since the page was opened): the old code may not understand the new service, so
 * it offers a reload rather than doing it, which would lose what is being typed.
 */
export function NewerBuildNotice() {
  const [build, setBuild] = useState(newerBuild());
  useEffect(() => onNewerBuild(setBuild), []);
  if (!build) return null;
  return (
    <div class="newer-build" role="status">
      <p>
        tagtrail was updated since this page was opened.{' '}
        <button type="button" class="button primary" onClick={() => window.location.reload()}>
          Reload
        </button>{' '}
        to use the new version; anything not yet saved on this page is lost.
      </p>
    </div>
  );
}
