import { describe, expect, it } from 'vitest';
import { DEVICE_COOKIE_LIFETIME_SECONDS, DeviceCookies, normalEmail } from './device-cookies.js';

const SECRET = new Uint8Array(32).fill(7);

describe('DeviceCookies', () => {
  it('names the same device for the email it was issued for, in any case', () => {
    const cookies = DeviceCookies.fromSecret(SECRET);
    const { value, maxAgeSeconds } = cookies.issue('Ann@Example.test');
    expect(maxAgeSeconds).toBe(DEVICE_COOKIE_LIFETIME_SECONDS);
    const device = cookies.deviceFor(value, ' ann@example.TEST ');
    expect(device).toBe(value.split('.')[0]);
    expect(cookies.deviceFor(value, 'bob@example.test')).toBeNull();
    expect(cookies.deviceFor(undefined, 'ann@example.test')).toBeNull();
  });

  it('refuses a cookie past its year, and one made under another deployment key', () => {
    let now = Date.UTC(2026, 0, 1);
    const cookies = DeviceCookies.fromSecret(SECRET, () => now);
    const { value } = cookies.issue('ann@example.test');
    now += (DEVICE_COOKIE_LIFETIME_SECONDS - 1) * 1000;
    expect(cookies.deviceFor(value, 'ann@example.test')).not.toBeNull();
    now += 1000;
    expect(cookies.deviceFor(value, 'ann@example.test')).toBeNull();

    const other = DeviceCookies.fromSecret(new Uint8Array(32).fill(8));
    const fresh = DeviceCookies.fromSecret(SECRET).issue('ann@example.test').value;
    expect(other.deviceFor(fresh, 'ann@example.test')).toBeNull();
  });
});

describe('normalEmail', () => {
  // Spellings PostgreSQL's lower() (glibc, C.UTF-8) takes for one address, so one account:
  // test/abuse/email-key.test.ts checks every character against the test server itself.
  it.each([
    ['KİM@example.test', 'kim@example.test'],
    ['\u212Aim@example.test', 'kim@example.test'],
    ['ΣΑΣ@example.test', 'σασ@example.test'],
    ['ΜΑΡΙΑΣ@example.test', 'μαριασ@example.test'],
    ['  Ann@Example.TEST ', 'ann@example.test'],
  ])('keys %s as %s', (typed, same) => {
    expect(normalEmail(typed)).toBe(normalEmail(same));
  });
});
