import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyId, SecretBox, SecretUnavailable } from './secret-box.js';

const keyA = Buffer.alloc(32, 1);
const keyB = Buffer.alloc(32, 2);

describe('SecretBox', () => {
  it('opens what it sealed, in the same context', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.string({ maxLength: 60 }),
        (plain, context) => {
          const box = new SecretBox([keyA]);
          const sealed = box.seal(plain, context);
          expect(SecretBox.isSealed(sealed)).toBe(true);
          expect(SecretBox.keyIdOf(sealed)).toBe(keyId(keyA));
          expect(box.open(sealed, context)).toBe(plain);
        },
      ),
    );
  });

  it('never shows the secret in the sealed form, and seals the same secret differently each time', () => {
    const box = new SecretBox([keyA]);
    const a = box.seal('whsec_topsecretvalue', 'ctx');
    const b = box.seal('whsec_topsecretvalue', 'ctx');
    expect(a).not.toContain('topsecret');
    expect(a).not.toBe(b);
  });

  it('refuses a sealed value moved to another context', () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal('JBSWY3DPEHPK3PXP', 'user_totp.secret org=1 user=2');
    expect(() => box.open(sealed, 'user_totp.secret org=1 user=3')).toThrow(SecretUnavailable);
  });

  it('refuses a damaged value, whichever byte changed', () => {
    const box = new SecretBox([keyA]);
    const sealed = box.seal('a secret', 'ctx');
    const body = sealed.slice(sealed.lastIndexOf(':') + 1);
    fc.assert(
      fc.property(fc.nat({ max: body.length - 2 }), (i) => {
        // Not the last character: base64url's final character may carry unused bits.
        const flipped = body[i] === 'A' ? 'B' : 'A';
        const damaged =
          sealed.slice(0, sealed.length - body.length) + body.slice(0, i) + flipped + body.slice(i + 1);
        expect(() => box.open(damaged, 'ctx')).toThrow(SecretUnavailable);
      }),
    );
    expect(() => box.open('tt1:zz', 'ctx')).toThrow(SecretUnavailable);
  });

  it('opens what older keys of its ring sealed, seals with the first, and names a key it lacks', () => {
    const old = new SecretBox([keyA]);
    const ring = new SecretBox([keyB, keyA]);
    const sealedOld = old.seal('s', 'ctx');
    expect(ring.open(sealedOld, 'ctx')).toBe('s');
    expect(ring.needsResealing(sealedOld)).toBe(true);
    expect(SecretBox.keyIdOf(ring.seal('s', 'ctx'))).toBe(keyId(keyB));
    expect(ring.needsResealing(ring.seal('s', 'ctx'))).toBe(false);
    expect(ring.keyIds).toEqual([keyId(keyB), keyId(keyA)]);
    const error = (() => {
      try {
        new SecretBox([keyB]).open(sealedOld, 'ctx');
      } catch (err) {
        return err as SecretUnavailable;
      }
    })();
    expect(error).toBeInstanceOf(SecretUnavailable);
    expect(error?.keyId).toBe(keyId(keyA));
  });

  it('without a key stores values as given, passes them through, and cannot open sealed ones', () => {
    const none = new SecretBox([]);
    expect(none.sealingKeyId).toBeNull();
    expect(none.seal('whsec_x', 'ctx')).toBe('whsec_x');
    expect(none.needsResealing('whsec_x')).toBe(false);
    expect(() => none.open(new SecretBox([keyA]).seal('s', 'ctx'), 'ctx')).toThrow(SecretUnavailable);
  });

  it('passes a value stored before sealing began through, and marks it for sealing', () => {
    const box = new SecretBox([keyA]);
    expect(box.open('whsec_plain', 'ctx')).toBe('whsec_plain');
    expect(box.needsResealing('whsec_plain')).toBe(true);
  });

  it('takes keys of 32 bytes only', () => {
    expect(() => new SecretBox([Buffer.alloc(16)])).toThrow(/32 bytes/);
  });
});
