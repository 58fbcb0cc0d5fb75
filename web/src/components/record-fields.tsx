import { FieldMessage, type FormErrors } from './form-errors.js';

/*
 * Fields an asset and a location both have, edited the same way on both forms. The
 * validity dates are not here: the asset form takes seconds and words its hints for
 * a new asset, the location form does not.
 */

/** The free-text description, with the API's message about it underneath. */
export function DescriptionField({
  id,
  value,
  errors,
  onValue,
}: {
  id: string;
  value: string;
  errors: FormErrors;
  onValue(value: string): void;
}) {
  return (
    <div class="field">
      <label for={id}>Description</label>
      <textarea
        id={id}
        rows={2}
        value={value}
        {...errors.input('description', id)}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
      <FieldMessage errors={errors} field="description" id={id} />
    </div>
  );
}

/** The record's `is_active`, with the API's message about it linked to the checkbox. */
export function ActiveCheckbox({
  id,
  checked,
  errors,
  onValue,
}: {
  id: string;
  checked: boolean;
  errors: FormErrors;
  onValue(checked: boolean): void;
}) {
  return (
    <>
      <label class="checkbox">
        <input
          id={id}
          type="checkbox"
          checked={checked}
          {...errors.input('is_active', id)}
          onChange={(e) => onValue(e.currentTarget.checked)}
        />
        Active
      </label>
      <FieldMessage errors={errors} field="is_active" id={id} />
    </>
  );
}
