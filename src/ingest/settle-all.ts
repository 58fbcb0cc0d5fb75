/**
 * Settles every item of a batch: the group commit's items once their transaction ended, the
 * limiter's waiters once their slots are taken. One whose settle throws (a bug: none may)
 * does not leave the others waiting for ever; the first such error is thrown after, so that
 * it shows and the process stops rather than hang.
 */
export function settleAll<P>(batch: readonly P[], settle: (p: P, i: number) => void): void {
  const thrown = settleRange(batch, settle, 0, batch.length);
  if (thrown) throw thrown.err;
}

/** Settles batch[start..end), each whatever another throws; the first error, if any. */
function settleRange<P>(
  batch: readonly P[],
  settle: (p: P, i: number) => void,
  start: number,
  end: number,
): { err: unknown } | undefined {
  let thrown: { err: unknown } | undefined;
  for (let i = start; i < end; i++) {
    try {
      settle(batch[i]!, i);
    } catch (err) {
      thrown ??= { err };
    }
  }
  return thrown;
}

/** Items settled in one turn of the event loop by settleInTurns. */
export const SETTLE_TURN = 256;

/**
 * settleAll in turns of the event loop, `perTurn` items each. A committed group of one-read
 * messages settles thousands at once (their acknowledgements, and the waiting messages their
 * slots let in), and in one loop that held the event loop for up to 90 ms, which every API
 * request meanwhile waited out (docs/ingest.md, "The API while a backlog is caught up").
 * Every item is settled whatever another throws; the first error is thrown once all are.
 */
export async function settleInTurns<P>(
  batch: readonly P[],
  settle: (p: P, i: number) => void,
  perTurn = SETTLE_TURN,
): Promise<void> {
  let thrown: { err: unknown } | undefined;
  for (let start = 0; start < batch.length; start += perTurn) {
    if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const inTurn = settleRange(batch, settle, start, Math.min(batch.length, start + perTurn));
    thrown ??= inTurn;
  }
  if (thrown) throw thrown.err;
}
