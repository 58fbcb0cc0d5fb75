/**
 * Which build of the web app this page runs, and whether the service now serves another
 * (docs/web-app.md, "After an upgrade"). The page's modules are served under
 * `/assets/<build>/`, so its own build is in this module's address; every /internal/
 * answer names the service's (`X-Tagtrail-Web-Build`, src/http/web-static.ts).
 */
export const WEB_BUILD_HEADER = 'x-tagtrail-web-build';

/** Null where the modules are not served by the service (unit tests): nothing to compare. */
export const OWN_BUILD: string | null = /\/assets\/([0-9a-f]{12})\//.exec(import.meta.url)?.[1] ?? null;

let newer: string | null = null;
const listeners = new Set<(build: string) => void>();

/** Called with every /internal/ answer's header: the first build unlike ours is announced once. */
export function noteServedBuild(served: string | null, own: string | null = OWN_BUILD): void {
  if (!served || !own || served === own || served === newer) return;
  newer = served;
  for (const listener of listeners) listener(served);
}

/** The build the service serves when it differs from this page's, else null. */
export function newerBuild(): string | null {
  return newer;
}

export function onNewerBuild(listener: (build: string) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
