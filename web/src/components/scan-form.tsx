import type { ComponentChildren, Ref } from 'preact';

/**
 * One big field a barcode scanner types into, and its button. Scanners act as keyboards
 * that type the code and press Enter, so Enter submits the form; the browser must not
 * capitalize, correct or remember what they type.
 */
export function ScanForm({
  id,
  label,
  inputRef,
  enterKeyHint,
  value,
  onValue,
  onSubmit,
  buttonClass,
  button,
}: {
  id: string;
  label: ComponentChildren;
  inputRef: Ref<HTMLInputElement>;
  enterKeyHint: 'go' | 'enter';
  value: string;
  onValue(value: string): void;
  onSubmit(event: Event): void;
  /** `primary` or `secondary`: the button's weight on the page. */
  buttonClass: string;
  button: string;
}) {
  return (
    <form onSubmit={onSubmit} class="scan-form">
      <label for={id}>{label}</label>
      <div class="scan-row">
        <input
          id={id}
          ref={inputRef}
          class="big"
          autocomplete="off"
          autocapitalize="off"
          spellcheck={false}
          enterKeyHint={enterKeyHint}
          value={value}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
        <button type="submit" class={`button ${buttonClass} big`}>
          {button}
        </button>
      </div>
    </form>
  );
}
