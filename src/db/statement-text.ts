/**
 * A statement text built once for each argument, and the same string object every time
 * after: `prepared` (./prepared.ts) finds a text's name in a Map, and a text built anew by
 * a template on every call is a new string to flatten and hash there, on every request.
 * For texts that vary by a few fixed choices (a lock clause, a table, a column).
 */
export function textPer<A extends string | boolean>(build: (arg: A) => string): (arg: A) => string {
  const texts = new Map<A, string>();
  return (arg) => {
    let text = texts.get(arg);
    if (text === undefined) {
      text = build(arg);
      texts.set(arg, text);
    }
    return text;
  };
}

/** textPer for a text without choices: built at its first use, when what it is built from is defined. */
export function textOnce(build: () => string): () => string {
  let text: string | undefined;
  return () => {
    text ??= build();
    return text;
  };
}
