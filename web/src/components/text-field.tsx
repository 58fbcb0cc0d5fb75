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
