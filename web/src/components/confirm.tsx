import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';

/**
 * The focus around a question asked in place of the button that asked it. The button goes
 * away when pressed, and with it the focus (to nothing: a screen reader said nothing of the
 * question, and a keyboard user's next Tab depended on the browser). Asking puts the focus
 * on Cancel, the harmless answer, inside a group named by the question, so the question is
 * read out; Cancel gives it back to the button. After the answer the focus is left where
 * the action put it (a deleted row is gone), unless it was lost, when it goes back to the
 * button as well. `ask` and `cancel` are the refs of the two buttons.
 */
export function useQuestionFocus(asking: boolean) {
  const ask = useRef<HTMLButtonElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const was = useRef(asking);
  useEffect(() => {
    if (was.current === asking) return;
    was.current = asking;
    if (asking) cancel.current?.focus();
    else if (!document.activeElement || document.activeElement === document.body) ask.current?.focus();
  }, [asking]);
  return { ask, cancel };
}

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
  const focus = useQuestionFocus(asking);
  const questionId = useId();
  if (!asking) {
    return (
      <button
        type="button"
        ref={focus.ask}
        class={danger ? 'button danger' : 'button secondary'}
        aria-label={ariaLabel}
        onClick={() => onAsking(true)}
      >
        {label}
      </button>
    );
  }
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group named by its question, read out as the focus lands on Cancel; a fieldset would need the question as its legend, laid out apart from its buttons
    <div class="confirm" role="group" aria-labelledby={questionId}>
      <span id={questionId}>{question}</span>
      <button type="button" class="button danger" disabled={busy} onClick={onYes}>
        {yes}
      </button>
      <button type="button" ref={focus.cancel} class="button secondary" onClick={() => onAsking(false)}>
        Cancel
      </button>
    </div>
  );
}
