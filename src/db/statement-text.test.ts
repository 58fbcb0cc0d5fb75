import { describe, expect, it } from 'vitest';
import { textOnce, textPer } from './statement-text.js';

describe('textPer', () => {
  it('builds a text once per argument and answers that same text after', () => {
    const built: boolean[] = [];
    const text = textPer((lock: boolean) => {
      built.push(lock);
      return `SELECT 1${lock ? ' FOR UPDATE' : ''}`;
    });
    expect(text(false)).toBe('SELECT 1');
    expect(text(true)).toBe('SELECT 1 FOR UPDATE');
    expect(text(false)).toBe('SELECT 1');
    expect(text(true)).toBe('SELECT 1 FOR UPDATE');
    expect(built).toEqual([false, true]);
  });
});

describe('textOnce', () => {
  it('builds its text at the first call, not before, and once', () => {
    let calls = 0;
    const text = textOnce(() => {
      calls++;
      return 'SELECT 2';
    });
    expect(calls).toBe(0);
    expect(text()).toBe('SELECT 2');
    expect(text()).toBe('SELECT 2');
    expect(calls).toBe(1);
  });
});
