import type { InputHTMLAttributes } from 'preact';

interface TextFieldProps {
  id: string;
  label: string;
  value: string;
  onValue(value: string): void;
  type?: 'text' | 'email' | 'password' | 'date' | 'search';
  autocomplete?: string;
  required?: boolean;
  minLength?: number;
  min?: string;
  placeholder?: string;
  class?: string;
}

/** A single-line input with its own label, so every form field is named for screen readers. */
export function TextField({ id, label, value, onValue, ...input }: TextFieldProps) {
  // Preact types <input> as a union keyed on a literal `type`; ours is one of the text-like
  // types above, which every member of that union accepts.
  const attributes = {
    id,
    value,
    onInput: (e: Event) => onValue((e.currentTarget as HTMLInputElement).value),
    ...input,
  } as InputHTMLAttributes<HTMLInputElement>;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input {...attributes} />
    </div>
  );
}

/**
 * A reader's MQTT topic, with what the service asks of it said in a hint
 * (docs/ingest.md, "Readers and scan points"), not only shown by example.
 */
export function ReaderTopicField({
  id,
  label,
  value,
  onValue,
  placeholder,
}: FixedFieldProps & { placeholder?: string }) {
  const hintId = `${id}-hint`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        class="mono"
        required
        maxLength={512}
        aria-describedby={hintId}
        placeholder={placeholder}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
      <p class="hint" id={hintId}>
        The MQTT topic this reader publishes to; unique across the broker, without + or #.
      </p>
    </div>
  );
}

/** A field whose input attributes are fixed by what it asks for: only its name and value vary. */
type FixedFieldProps = Pick<TextFieldProps, 'id' | 'label' | 'value' | 'onValue'>;

/**
 * A password someone chooses (signing up, accepting an invitation): the same minimum of 8
 * the service enforces, said in a hint, and marked as new so a password manager offers
 * to generate and store it.
 */
export function NewPasswordField({ id, label, value, onValue }: FixedFieldProps) {
  const hintId = `${id}-hint`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        type="password"
        autocomplete="new-password"
        required
        minLength={8}
        aria-describedby={hintId}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
      <p class="hint" id={hintId}>
        At least 8 characters; a few unrelated words make a good one.
      </p>
    </div>
  );
}

/**
 * The 6-digit code of an authenticator app: a numeric keyboard on phones, marked as a
 * one-time code so a password manager that holds the secret can fill it, and spaces
 * pasted around it dropped.
 */
export function AppCodeField({ id, label, hint, value, onValue }: FixedFieldProps & { hint?: string }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        aria-describedby={hint ? `${id}-hint` : undefined}
        inputMode="numeric"
        autocomplete="one-time-code"
        pattern="[0-9]{6}"
        maxLength={6}
        required
        value={value}
        onInput={(e) => onValue(e.currentTarget.value.trim())}
      />
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}
