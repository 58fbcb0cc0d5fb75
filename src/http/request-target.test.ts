import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { originForm } from './request-target.js';

describe('originForm', () => {
  it('takes the path and query of an absolute-form target', () => {
    expect(originForm('http://x/api/v1/orgs/me')).toBe('/api/v1/orgs/me');
    expect(originForm('HTTP://X:8080/api/v1/assets?q=a')).toBe('/api/v1/assets?q=a');
    expect(originForm('https://user@host')).toBe('/');
    expect(originForm('http://host?x=1')).toBe('/?x=1');
  });

  it('decodes the escapes of unreserved characters in the path, and only there', () => {
    expect(originForm('/%61pi/v1/orgs/me')).toBe('/api/v1/orgs/me');
    expect(originForm('/api/v1/assets/%31%32')).toBe('/api/v1/assets/12');
    expect(originForm('/a%2Fb%20c%2ed%7E')).toBe('/a%2Fb%20c.d~');
    expect(originForm('/api/v1/assets?q=%61')).toBe('/api/v1/assets?q=%61');
    expect(originForm('/bad%zz%4')).toBe('/bad%zz%4');
  });

  it('leaves an origin-form target without escapes as it is', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\/[A-Za-z0-9/._~?=&-]*$/), (target) => {
        expect(originForm(target)).toBe(target);
      }),
    );
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(fc.string(), (target) => {
        const once = originForm(target);
        expect(originForm(once)).toBe(once);
      }),
    );
  });
});
