import type { InputHTMLAttributes } from 'preact';
import { FieldMessage, type FormErrors } from './form-errors.js';

interface TextFieldProps {
  id: string;
  label: string;
  value: string;
  onValue(value: string): void;
  type?: 'text' | 'email' | 'password' | 'date' | 'search';
  autocomplete?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  min?: string;
  max?: string;
  placeholder?: string;
  class?: string;
  /** What the field asks for, said under it and tied to it by aria-describedby. */
  hint?: string;
  /** The form's last error, whose messages for `field` are shown under this input. */
  errors?: FormErrors;
  field?: string;
}

/** A single-line input with its own label, so every form field is named for screen readers. */
export function TextField({ id, label, value, onValue, hint, errors, field, ...input }: TextFieldProps) {
  const hintId = `${id}-hint`;
  const hintIds = hint === undefined ? undefined : hintId;
  // Preact types <input> as a union keyed on a literal `type`; ours is one of the text-like
  // types above, which every member of that union accepts.
  const attributes = {
    id,
    value,
    onInput: (e: Event) => onValue((e.currentTarget as HTMLInputElement).value),
    ...(errors && field
      ? errors.input(field, id, hintIds)
      : hint === undefined
        ? {}
        : { 'aria-describedby': hintId }),
    ...input,
  } as InputHTMLAttributes<HTMLInputElement>;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input {...attributes} />
      {hint !== undefined && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
      {errors && field && <FieldMessage errors={errors} field={field} id={id} />}
    </div>
  );
}

/**
 * A reader's MQTT topic, with what the service asks of it said in a hint
 * (docs/ingest.md, "Readers and scan points"), not only shown by example.
 */
export function ReaderTopicField({ placeholder, ...field }: FixedFieldProps & { placeholder?: string }) {
  return (
    <TextField
      {...field}
      class="mono"
      required
      maxLength={512}
      placeholder={placeholder}
      hint="The MQTT topic this reader publishes to; unique across the broker, without + or #."
    />
  );
}

/** A field whose input attributes are fixed by what it asks for: only its name and value vary. */
type FixedFieldProps = Pick<TextFieldProps, 'id' | 'label' | 'value' | 'onValue' | 'errors' | 'field'>;

/**
 * A password someone chooses (signing up, accepting an invitation): the same minimum of 8
 * the service enforces, said in a hint, and marked as new so a password manager offers
 * to generate and store it.
 */
export function NewPasswordField(field: FixedFieldProps) {
  return (
    <TextField
      {...field}
      type="password"
      autocomplete="new-password"
      required
      minLength={8}
      hint="At least 8 characters; a few unrelated words make a good one."
    />
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
