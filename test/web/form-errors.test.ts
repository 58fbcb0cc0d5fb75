import { describe, expect, it } from 'vitest';
import { ApiError } from '../../web/src/api.js';
import { FORM_CHANGED, FormErrors } from '../../web/src/components/field-errors.js';

/**
 * A form's field messages go as their fields change (useFormErrors keeps which did): the
 * message was about the value sent, and beside a retyped one it said that one was wrong
 * too. What names no field goes once anything in the form changes.
 */

const refused = (detail: string, fields: { field: string; message: string }[]) =>
  new ApiError(
    400,
    'validation_error',
    detail,
    fields.map((f) => ({ ...f, code: 'invalid_value' })),
  );

describe('web app form errors (FormErrors)', () => {
  const error = refused('email must be an email address (and 1 more validation errors)', [
    { field: 'email', message: 'email must be an email address' },
    { field: 'name', message: 'name must not be blank' },
  ]);
  const shown = (field: string) => field === 'email' || field === 'name';

  it('shows each field under it, and points the alert at them', () => {
    const errors = new FormErrors(error, shown);
    expect(errors.of('email')).toEqual(['email must be an email address']);
    expect(errors.input('email', 'f-email', 'f-email-hint')).toEqual({
      'aria-invalid': 'true',
      'aria-describedby': 'f-email-hint f-email-error',
    });
    expect(errors.rest()).toEqual(['Check the fields marked above.']);
  });

  it('drops a changed field: its message, its mark, and the alert that pointed at it', () => {
    const one = new FormErrors(error, shown, new Set(['email']));
    expect(one.of('email')).toEqual([]);
    expect(one.input('email', 'f-email', 'f-email-hint')).toEqual({
      'aria-invalid': undefined,
      'aria-describedby': 'f-email-hint',
    });
    expect(one.of('name')).toEqual(['name must not be blank']);
    expect(one.rest()).toEqual(['Check the field marked above.']);

    expect(new FormErrors(error, shown, new Set(['email', 'name'])).rest()).toEqual([]);
  });

  it('keeps what names no input, and a detail that repeats no field', () => {
    const hidden = refused('name must not be blank', [
      { field: 'name', message: 'name must not be blank' },
      { field: 'family', message: 'family must be one of …' },
    ]);
    expect(new FormErrors(hidden, shown, new Set(['name'])).rest()).toEqual([
      'family: family must be one of …',
    ]);
    const generic = refused('The request is not valid', [
      { field: 'name', message: 'name must not be blank' },
    ]);
    expect(new FormErrors(generic, shown).rest()).toEqual(['The request is not valid']);
    expect(new FormErrors(generic, shown, new Set(['name'])).rest()).toEqual([]);
    const conflict = new ApiError(409, 'conflict', 'dana@example.test is already invited');
    expect(new FormErrors(conflict, shown).rest()).toEqual(['dana@example.test is already invited']);
  });

  it('drops what names no field once anything in the form changes, keeping the pointer at fields still marked', () => {
    const conflict = new ApiError(409, 'conflict', 'dana@example.test is already invited');
    expect(new FormErrors(conflict, shown, new Set([FORM_CHANGED])).rest()).toEqual([]);
    expect(
      new FormErrors(new Error('The service could not be reached'), shown, new Set([FORM_CHANGED])).rest(),
    ).toEqual([]);
    const hidden = refused('The request is not valid', [
      { field: 'name', message: 'name must not be blank' },
      { field: 'family', message: 'family must be one of …' },
    ]);
    expect(new FormErrors(hidden, shown, new Set([FORM_CHANGED])).rest()).toEqual([
      'Check the field marked above.',
    ]);
    expect(new FormErrors(hidden, shown, new Set([FORM_CHANGED, 'name'])).rest()).toEqual([]);
  });

  it('an input anywhere in the form tells of the change once, and of a marked field by its name', () => {
    // No DOM here: an element is what `instanceof Element` accepts, with an id and no ancestors.
    class Element {
      constructor(readonly id: string) {}
      closest() {
        return null;
      }
    }
    const global = globalThis as { Element?: unknown };
    const before = global.Element;
    global.Element = Element;
    try {
      const edited: string[] = [];
      const form = (done: ReadonlySet<string>) => new FormErrors(error, shown, done, (f) => edited.push(f));
      const event = (id: string) => ({ target: new Element(id) }) as unknown as Event;
      const errors = form(new Set());
      errors.input('email', 'f-email');
      errors.changed(event('f-email'));
      expect(edited).toEqual(['email', FORM_CHANGED]);
      form(new Set([FORM_CHANGED, 'email'])).changed(event('f-other'));
      expect(edited).toEqual(['email', FORM_CHANGED]);
    } finally {
      global.Element = before;
    }
  });
});
