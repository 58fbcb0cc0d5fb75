import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { overrideQuery } from './query-override.js';

/** A stand-in connection whose prototype's `query` says who answered. */
class FakeClient {
  name = 'client';
  query(text: string): string {
    return `${this.name}:${text}`;
  }
}
const client = () => new FakeClient() as unknown as pg.PoolClient & FakeClient;

describe('overrideQuery', () => {
  it('answers through the replacement, which reaches the connection as its own method, until put back', () => {
    const c = client();
    const restore = overrideQuery(
      c,
      (original) =>
        (...args) =>
          `wrapped ${original(...args)}`,
    );
    expect(Object.hasOwn(c, 'query')).toBe(true);
    expect(c.query('a')).toBe('wrapped client:a');
    restore();
    expect(Object.hasOwn(c, 'query')).toBe(false);
    expect(c.query('b')).toBe('client:b');
  });

  it('puts an earlier override back, and leaves one installed over it in place', () => {
    const c = client();
    const outer = overrideQuery(
      c,
      (original) =>
        (...args) =>
          `outer ${original(...args)}`,
    );
    const inner = overrideQuery(
      c,
      (original) =>
        (...args) =>
          `inner ${original(...args)}`,
    );
    expect(c.query('a')).toBe('inner outer client:a');
    // The earlier one put back first changes nothing: the later one is still installed.
    outer();
    expect(c.query('b')).toBe('inner outer client:b');
    inner();
    expect(c.query('c')).toBe('outer client:c');
    outer();
    expect(c.query('d')).toBe('client:d');
    expect(Object.hasOwn(c, 'query')).toBe(false);
  });

  it('is idempotent to put back', () => {
    const c = client();
    const restore = overrideQuery(c, () => () => 'replaced');
    restore();
    restore();
    expect(c.query('a')).toBe('client:a');
  });
});
