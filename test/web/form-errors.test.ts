import { describe, expect, it } from 'vitest';
import { ApiError } from '../../web/src/api.js';
import { FormErrors } from '../../web/src/components/field-errors.js';

/**
 * A form's field messages go as their fields change (useFormErrors keeps which did): the
 * message was about the value sent, and beside a retyped one it said that one was wrong
 * too. What names no field stays until the next submit.
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
    expect(new FormErrors(conflict, shown, new Set(['email'])).rest()).toEqual([
      'dana@example.test is already invited',
    ]);
  });
});
