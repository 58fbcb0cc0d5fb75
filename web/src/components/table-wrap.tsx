import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * The box a table scrolls sideways in when it is wider than the screen (a phone, a long
 * name). Only while it does scroll is it a focusable region named `label`: a keyboard user
 * can then reach it and scroll it with the arrow keys (axe's scrollable-region-focusable,
 * which the keys and members tables failed at 360px), and where it fits it adds no stop
 * to the tab order. Measured after every render (rows arrive) and on every resize.
 */
export function TableWrap({
  label,
  busy,
  children,
}: {
  label: string;
  busy?: boolean;
  children: ComponentChildren;
}) {
  const box = useRef<HTMLElement>(null);
  const [scrolls, setScrolls] = useState(false);
  const measure = () => {
    const el = box.current;
    if (el) setScrolls(el.scrollWidth > el.clientWidth);
  };
  useEffect(measure);
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  // One element either way: switching between two would remount the table (and lose the
  // focus inside it) whenever the width crossed the line. A section is a region only once
  // named, so unnamed it is a plain box.
  return (
    <section
      class="table-wrap"
      ref={box}
      aria-busy={busy}
      tabIndex={scrolls ? 0 : undefined}
      aria-label={scrolls ? label : undefined}
    >
      {children}
    </section>
  );
}
