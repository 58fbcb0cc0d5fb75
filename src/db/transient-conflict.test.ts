import { describe, expect, it } from 'vitest';
import {
  isTransientConflict,
  TRANSIENT_CONFLICT_ATTEMPTS,
  transientConflictPauseMs,
} from './transient-conflict.js';

const pgError = (code: string) => Object.assign(new Error('from the server'), { code });

describe('transient conflicts', () => {
  it('are the deadlock and serialization failures, nothing else', () => {
    expect(isTransientConflict(pgError('40P01'))).toBe(true);
    expect(isTransientConflict(pgError('40001'))).toBe(true);
    for (const code of ['23505', '40002', '55P03', '57014', '08006']) {
      expect(isTransientConflict(pgError(code)), code).toBe(false);
    }
    expect(isTransientConflict(new Error('no code'))).toBe(false);
    expect(isTransientConflict(null)).toBe(false);
    expect(isTransientConflict(undefined)).toBe(false);
  });

  it('are paused on for a few milliseconds, at random, longer after each attempt', () => {
    for (let attempt = 1; attempt < TRANSIENT_CONFLICT_ATTEMPTS; attempt++) {
      const scale = 2 ** (attempt - 1);
      expect(transientConflictPauseMs(attempt, () => 0)).toBe(2 * scale);
      expect(transientConflictPauseMs(attempt, () => 0.999999)).toBe(10 * scale);
    }
  });
});
