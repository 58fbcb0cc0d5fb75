import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A page's heading and title. On navigation the heading takes focus, so keyboard and
 * screen-reader users start at the new page instead of the link they left.
 */
export function PageHeader({ title, children }: { title: string; children?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · tagtrail`;
    if (document.activeElement === document.body || document.activeElement?.closest('nav, .account-menu')) {
      heading.current?.focus();
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
