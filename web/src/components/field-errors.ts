import { ApiError, messagesOf } from '../api.js';

export const NOTHING_EDITED: ReadonlySet<string> = new Set();

/** In `edited`: something in the form changed since the error (no field's name is empty). */
export const FORM_CHANGED = '';

const pointer = (fields: number) =>
  fields === 1 ? 'Check the field marked above.' : 'Check the fields marked above.';

/**
 * An error of a form's last submit, split the way a person reads it: the API's message for
 * each field shown next to that field, everything else (the detail, fields the form has
 * no input for) in one alert above the submit button. A field changed since the error came
 * shows its message no more (nor marks its input invalid): the message was about what was
 * sent, and kept beside the new value it told the person typing that the new one was wrong
 * too. What names no field (a conflict, a field without an input) goes once anything in
 * the form changes: it too was about what was sent, and the person is already correcting
 * it (retyping the email an invitation was refused for, say).
 */
export class FormErrors {
  private readonly byField = new Map<string, string[]>();
  /** The API's field of each input (by id) that shows one, filled as the form renders. */
  private readonly fieldOfInput = new Map<string, string>();

  /**
   * `shown`: whether the form shows a field's messages next to an input of its own.
   * `edited`: the fields changed since the error; `onEdited` is told of the next one.
   */
  constructor(
    readonly error: unknown,
    private readonly shown: (field: string) => boolean = () => false,
    private readonly edited: ReadonlySet<string> = NOTHING_EDITED,
    private readonly onEdited: (field: string) => void = () => undefined,
  ) {
    if (error instanceof ApiError) {
      for (const f of error.fields) {
        this.byField.set(f.field, [...(this.byField.get(f.field) ?? []), f.message]);
      }
    }
  }

  static readonly none = new FormErrors(null);

  /** The messages of one field (none once the field has been changed since). */
  of(field: string): string[] {
    if (this.edited.has(field)) return [];
    return this.byField.get(field) ?? [];
  }

  /** Attributes of an input with its error: aria-invalid and the message's id. */
  input(field: string, id: string, hintId?: string) {
    this.fieldOfInput.set(id, field);
    const has = this.of(field).length > 0;
    const described = [hintId, has ? `${id}-error` : undefined].filter(Boolean).join(' ');
    return {
      'aria-invalid': has ? ('true' as const) : undefined,
      'aria-describedby': described || undefined,
    };
  }

  /**
   * The form's listeners (`<form {...errors.listeners}>`): an input or change inside it, in
   * an input given `input()` (or inside an element with `data-error-field`, for a field
   * of several inputs), clears that field's message. Input events bubble to the form, so
   * no input's own handler changes.
   */
  readonly changed = (event: Event): void => {
    const target = event.target;
    if (!(target instanceof Element)) return;
    const field =
      this.fieldOfInput.get(target.id) ??
      target.closest<HTMLElement>('[data-error-field]')?.dataset.errorField;
    if (field !== undefined && this.of(field).length > 0) this.onEdited(field);
    if (!this.edited.has(FORM_CHANGED) && this.rest().length > 0) this.onEdited(FORM_CHANGED);
  };

  readonly listeners = { onInput: this.changed, onChange: this.changed };

  /** What no field shows: the detail and the messages of fields without an input. */
  rest(): string[] {
    if (this.error === null || this.error === undefined) return [];
    const changedSince = this.edited.has(FORM_CHANGED);
    if (!(this.error instanceof ApiError)) return changedSince ? [] : messagesOf(this.error);
    const error = this.error;
    const hidden = error.fields.filter((f) => !this.shown(f.field));
    const shownFields = error.fields.filter((f) => this.shown(f.field));
    const open = shownFields.filter((f) => !this.edited.has(f.field));
    // Only the pointer at the fields still marked is left to say.
    if (changedSince) return open.length > 0 ? [pointer(open.length)] : [];
    // Every field it named has been changed since: nothing of it is left to say.
    if (error.fields.length > 0 && hidden.length === 0 && open.length === 0) return [];
    // The detail often repeats a field's message; the field already says it (or has been
    // changed since, when the detail is about a value no longer there).
    const repeats = shownFields.some((f) => error.message.includes(f.message));
    const lines: string[] = [];
    if (!repeats) lines.push(error.message);
    else if (open.length > 0) lines.push(pointer(open.length));
    for (const f of hidden) lines.push(`${f.field}: ${f.message}`);
    return lines;
  }
}
