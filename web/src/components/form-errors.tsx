import { ApiError } from '../api.js';
import { MessagesAlert, messagesOf } from './errors.js';

/**
 * An error of a form's last submit, split the way a person reads it: the API's message for
 * each field shown next to that field, everything else (the detail, fields the form has
 * no input for) in one alert above the submit button.
 */
export class FormErrors {
  private readonly byField = new Map<string, string[]>();

  /** `shown`: whether the form shows a field's messages next to an input of its own. */
  constructor(
    readonly error: unknown,
    private readonly shown: (field: string) => boolean = () => false,
  ) {
    if (error instanceof ApiError) {
      for (const f of error.fields) {
        this.byField.set(f.field, [...(this.byField.get(f.field) ?? []), f.message]);
      }
    }
  }

  static readonly none = new FormErrors(null);

  /** The messages of one field. */
  of(field: string): string[] {
    return this.byField.get(field) ?? [];
  }

  /** Attributes of an input with its error: aria-invalid and the message's id. */
  input(field: string, id: string, hintId?: string) {
    const has = this.of(field).length > 0;
    const described = [hintId, has ? `${id}-error` : undefined].filter(Boolean).join(' ');
    return {
      'aria-invalid': has ? ('true' as const) : undefined,
      'aria-describedby': described || undefined,
    };
  }

  /** What no field shows: the detail and the messages of fields without an input. */
  rest(): string[] {
    if (this.error === null || this.error === undefined) return [];
    if (!(this.error instanceof ApiError)) return messagesOf(this.error);
    const hidden = this.error.fields.filter((f) => !this.shown(f.field));
    const inline = this.error.fields.length - hidden.length;
    // The detail often repeats a field's message; the field already says it.
    const repeats = this.error.fields.some(
      (f) => this.shown(f.field) && this.error instanceof ApiError && this.error.message.includes(f.message),
    );
    const lines = [
      repeats
        ? inline === 1
          ? 'Check the field marked above.'
          : 'Check the fields marked above.'
        : this.error.message,
    ];
    for (const f of hidden) lines.push(`${f.field}: ${f.message}`);
    return lines;
  }
}

/** The message under a field; its id is what the input's aria-describedby names. */
export function FieldMessage({ errors, field, id }: { errors: FormErrors; field: string; id: string }) {
  const messages = errors.of(field);
  if (messages.length === 0) return null;
  return (
    <p class="field-error" id={`${id}-error`}>
      {messages.join(' ')}
    </p>
  );
}

/** The form-level part of the error, announced when it appears. */
export function FormAlert({ errors }: { errors: FormErrors }) {
  const messages = errors.rest();
  if (messages.length === 0) return null;
  return <MessagesAlert messages={messages} />;
}
