import { generate } from 'otplib';

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The code an authenticator app shows `steps` 30-second steps from `from` (epoch seconds; now). */
export const codeAt = (secret: string, steps = 0, from = nowSeconds()) =>
  generate({ secret, epoch: from + steps * 30 });

/** When each enrolment's confirming code was made (epoch seconds), by secret. */
const confirmedAt = new Map<string, number>();

/** The code that confirms `secret`'s enrolment now; its step is remembered for codeAfterConfirming. */
export function confirmingCode(secret: string): Promise<string> {
  const now = nowSeconds();
  confirmedAt.set(secret, now);
  return codeAt(secret, 0, now);
}

/**
 * The code `steps` steps after the one that confirmed `secret` (0: that code, now spent).
 * Counted from the confirming code's step, not from now: a 30 s boundary crossed since
 * would make "now" the next, unspent step (CI failed on it).
 */
export function codeAfterConfirming(secret: string, steps: number): Promise<string> {
  const from = confirmedAt.get(secret);
  if (from === undefined) throw new Error('no enrolment of this secret was confirmed through confirmingCode');
  return codeAt(secret, steps, from);
}
