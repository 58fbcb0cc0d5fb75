import type { AnchorHTMLAttributes, ComponentChildren, TargetedMouseEvent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** A history-API router: the path is the state; links push, Back and Forward pop. */

const CHANGE = 'tagtrail:navigate';

export interface Location {
  path: string;
  search: URLSearchParams;
  state: unknown;
}

function current(): Location {
  return {
    path: window.location.pathname,
    search: new URLSearchParams(window.location.search),
    state: window.history.state,
  };
}

export function navigate(to: string, options: { replace?: boolean; state?: unknown } = {}): void {
  const here = window.location.pathname + window.location.search;
  if (to === here && !options.replace) return;
  if (options.replace) window.history.replaceState(options.state ?? null, '', to);
  else window.history.pushState(options.state ?? null, '', to);
  window.dispatchEvent(new Event(CHANGE));
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return location;
}

/** Matches `/assets/:id` style patterns; returns the parameters or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!;
    const g = got[i]!;
    if (w.startsWith(':')) {
      if (!g) return null;
      params[w.slice(1)] = decodeURIComponent(g);
    } else if (w !== g) return null;
  }
  return params;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & {
  href: string;
  state?: unknown;
  children: ComponentChildren;
};

export function Link({ href, state, children, onClick, ...rest }: LinkProps) {
  const handle = (event: TargetedMouseEvent<HTMLAnchorElement>) => {
    if (typeof onClick === 'function') onClick(event);
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href, { state });
  };
  return (
    <a href={href} onClick={handle} {...rest}>
      {children}
    </a>
  );
}
