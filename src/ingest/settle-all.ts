/**
 * Settles every item of a batch: the group commit's items once their transaction ended, the
 * limiter's waiters once their slots are taken. One whose settle throws (a bug: none may)
 * does not leave the others waiting for ever; the first such error is thrown after, so that
 * it shows and the process stops rather than hang.
 */
export function settleAll<P>(batch: readonly P[], settle: (p: P, i: number) => void): void {
  let thrown: { err: unknown } | undefined;
  for (let i = 0; i < batch.length; i++) {
    try {
      settle(batch[i]!, i);
    } catch (err) {
      thrown ??= { err };
    }
  }
  if (thrown) throw thrown.err;
}
