import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * The panel that shows a secret or link the service keeps no copy of (an API key, a webhook
 * signing secret, an invitation link), in place of the form that made it. It takes the
 * focus on appearing so a screen reader announces it before anything else, and stays until
 * the person says they have stored what it shows.
 */
export function ShownOncePanel({
  titleId,
  title,
  doneLabel,
  onDone,
  children,
}: {
  titleId: string;
  title: ComponentChildren;
  doneLabel: string;
  onDone(): void;
  children: ComponentChildren;
}) {
  const panel = useRef<HTMLElement>(null);
  useEffect(() => panel.current?.focus(), []);
  // The panel goes away with the focus in it, which fell to nothing. It goes to what takes
  // the panel's place (the form that made the secret, for the next one; else what follows),
  // once that has rendered.
  const done = () => {
    const here = panel.current;
    const parent = here?.parentElement;
    const index = parent && here ? [...parent.children].indexOf(here) : -1;
    onDone();
    setTimeout(() => {
      if (document.activeElement && document.activeElement !== document.body) return;
      const next = parent?.children[index];
      next
        ?.querySelector<HTMLElement>('input:not([type="hidden"]), select, textarea, button, a[href]')
        ?.focus();
    }, 0);
  };
  return (
    <section class="card minted" aria-labelledby={titleId} ref={panel} tabIndex={-1}>
      <h2 id={titleId}>{title}</h2>
      {children}
      <button type="button" class="button secondary" onClick={done}>
        {doneLabel}
      </button>
    </section>
  );
}
