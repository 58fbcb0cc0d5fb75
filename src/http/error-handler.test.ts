import { describe, expect, it } from 'vitest';
import { toApiError } from './error-handler.js';

const pgError = (code: string) => Object.assign(new Error('from the server'), { code });

describe('toApiError of a transaction aborted by deadlocks (src/db/transient-conflict.ts)', () => {
  it('still so after the last attempt, answers 503 with Retry-After, not 500', () => {
    const answer = toApiError(pgError('40P01'), 1024);
    expect(answer?.type).toBe('service_unavailable');
    expect(answer?.headers?.['retry-after']).toMatch(/^\d+$/);
  });
});
