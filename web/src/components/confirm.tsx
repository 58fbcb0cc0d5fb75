import type { ComponentChildren } from 'preact';

/**
 * An action that cannot be undone (revoke, remove, delete), asked twice: its button, and once
 * pressed, in its place the question with a "Yes, …" button and Cancel. The parent keeps
 * whether it is asking, so it can close the question once the action succeeded. The yes
 * button is disabled while the action runs so a double click does not send it twice.
 */
export function ConfirmedAction({
  label,
  ariaLabel,
  danger = false,
  asking,
  onAsking,
  question,
  yes,
  busy,
  onYes,
}: {
  label: string;
  ariaLabel?: string;
  /** The first button in the danger style too (the secondary one otherwise). */
  danger?: boolean;
  asking: boolean;
  onAsking(asking: boolean): void;
  question: ComponentChildren;
  yes: string;
  busy: boolean;
  onYes(): void;
}) {
  if (!asking) {
    return (
      <button
        type="button"
        class={danger ? 'button danger' : 'button secondary'}
        aria-label={ariaLabel}
        onClick={() => onAsking(true)}
      >
        {label}
      </button>
    );
  }
  return (
    <div class="confirm">
      <span>{question}</span>
      <button type="button" class="button danger" disabled={busy} onClick={onYes}>
        {yes}
      </button>
      <button type="button" class="button secondary" onClick={() => onAsking(false)}>
        Cancel
      </button>
    </div>
  );
}
