import { useState } from 'preact/hooks';
import { MessagesAlert } from './errors.js';
import { FormErrors, NOTHING_EDITED } from './field-errors.js';

// The class is apart from the components, so it can be tested without a browser or JSX.
export { FormErrors } from './field-errors.js';

/**
 * The FormErrors of an action's error (`useAction`'s `error`), whose field messages go as
 * their fields change: spread `errors.listeners` on the form. A new error (the next refused
 * submit) shows all its fields again.
 */
export function useFormErrors(error: unknown, shown?: (field: string) => boolean): FormErrors {
  const [edited, setEdited] = useState<{ of: unknown; fields: ReadonlySet<string> }>({
    of: null,
    fields: NOTHING_EDITED,
  });
  const fields = edited.of === error ? edited.fields : NOTHING_EDITED;
  return new FormErrors(error, shown, fields, (field) =>
    setEdited((was) => ({
      of: error,
      fields: new Set([...(was.of === error ? was.fields : []), field]),
    })),
  );
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
