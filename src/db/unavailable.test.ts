import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from './unavailable.js';

const withCode = (code: string) => Object.assign(new Error(`server said ${code}`), { code });

describe('isDatabaseUnavailable', () => {
  it.each(['08000', '08003', '08006', '08001', '08004', '57P01', '57P03', '53300', '53100', '57014'])(
    '%s is an outage: the same request may succeed later',
    (code) => expect(isDatabaseUnavailable(withCode(code))).toBe(true),
  );

  it.each(['08P01', '23505', '40001', '42P01', 'XX000'])('%s is not', (code) => {
    expect(isDatabaseUnavailable(withCode(code))).toBe(false);
  });

  it('a refused connection to each address of a host name is one', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(isDatabaseUnavailable(new AggregateError([refused, refused]))).toBe(true);
  });
});
