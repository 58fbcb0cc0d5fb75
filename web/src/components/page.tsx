import type { ComponentChildren, RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A page's heading and title. On navigation the heading takes focus, so keyboard and
 * screen-reader users start at the new page instead of the link they left; or `focus`,
 * on a page whose first act is typing (the handheld's scanner "types" into whatever has
 * the focus, and a scan into the heading was lost).
 */
export function PageHeader({
  title,
  focus,
  children,
}: {
  title: string;
  focus?: RefObject<HTMLElement | null>;
  children?: ComponentChildren;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · tagtrail`;
    if (document.activeElement === document.body || document.activeElement?.closest('nav, .account-menu')) {
      (focus?.current ?? heading.current)?.focus();
    }
  }, [title]);
  return (
    <div class="page-header">
      <h1 ref={heading} tabIndex={-1}>
        {title}
      </h1>
      {children}
    </div>
  );
}
