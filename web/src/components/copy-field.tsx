import { useRef, useState } from 'preact/hooks';

/**
 * A read-only value with a Copy button, for secrets and links shown once (API keys,
 * invitation links). Where the clipboard is blocked, the value is selected for Ctrl+C.
 */
export function CopyField({ id, label, value }: { id: string; label: string; value: string }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const field = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      field.current?.select();
      setCopied('failed');
    }
  };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <input
          id={id}
          ref={field}
          class="mono"
          readOnly
          value={value}
          onFocus={(e) => e.currentTarget.select()}
        />
        {/* Named for what it copies: a panel with several (a reader's user name and password)
            read as "Copy, Copy" to a screen reader. The name is in the button's text, not an
            aria-label, which would make the button one more element labelled with the field's
            label. */}
        <button type="button" class="button primary" onClick={copy}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
          <span class="visually-hidden"> {label}</span>
        </button>
      </div>
      <p class="hint" role="status">
        {copied === 'yes' && 'Copied to the clipboard.'}
        {copied === 'failed' &&
          `Copying is blocked here; the ${label.toLowerCase()} is selected, press Ctrl+C (⌘C) to copy it.`}
      </p>
    </div>
  );
}
