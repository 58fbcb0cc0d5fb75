import { messagesOf } from '../api.js';

/** Errors shown next to the form or list they belong to; announced when they appear. */
export function ErrorAlert({ error, id }: { error: unknown; id?: string }) {
  if (error === null || error === undefined) return null;
  return <MessagesAlert messages={messagesOf(error)} id={id} />;
}

/** An error alert of one or more messages: the first as its sentence, the others listed below. */
export function MessagesAlert({ messages, id }: { messages: string[]; id?: string }) {
  const [first, ...rest] = messages;
  return (
    <div class="alert alert-error" role="alert" id={id}>
      <p>{first}</p>
      {rest.length > 0 && (
        <ul>
          {rest.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
