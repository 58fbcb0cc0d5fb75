import type pg from 'pg';

/** A connection's `query`, as an override calls it. */
export type QueryMethod = (...args: unknown[]) => unknown;

/**
 * Puts `make(original)` in place of the connection's `query` for a while, as an own property
 * over the prototype's: the connection stays the object its callers hold (the key of the
 * WeakMaps of ./commit.ts). `original` is what was there, bound to the connection: the
 * prototype's method or an override installed earlier. The answer puts it back, unless
 * another override was installed over this one meanwhile (that one puts this one back).
 */
export function overrideQuery(
  client: pg.PoolClient,
  make: (original: QueryMethod) => QueryMethod,
): () => void {
  const holder = client as unknown as { query: QueryMethod };
  const own = Object.getOwnPropertyDescriptor(client, 'query');
  const previous = holder.query;
  const replacement = make((...args) => previous.apply(client, args));
  holder.query = replacement;
  return () => {
    if (holder.query !== replacement) return;
    if (own) Object.defineProperty(client, 'query', own);
    else delete (holder as { query?: QueryMethod }).query;
  };
}
