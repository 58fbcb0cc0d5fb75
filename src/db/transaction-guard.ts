import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A check that rides in the prologue of the first organization transaction started within
 * `withTransactionGuard`: one more statement in the same write, instead of a round trip of
 * its own before the work. Its verdict holds every transaction of the scope: none returns
 * or commits before the check has passed, and a failed check aborts them.
 */
export interface TransactionGuard {
  /** The organization the check's statement reads under (row-level security). */
  readonly orgId: number;
  /**
   * One statement, sent behind the prologue in the same write; named, so that each
   * connection parses and plans it once.
   */
  readonly query: { name: string; text: string; values: unknown[] };
  /** Throws when the rows the statement read mean the work must not stand. */
  verify(rows: unknown[]): void;
}

export interface GuardState {
  guard: TransactionGuard;
  /** Set by the transaction that sent the check; rejects with what `verify` threw. */
  verdict?: Promise<void>;
}

const guards = new AsyncLocalStorage<GuardState>();

/** The guard scope the caller runs in, if any (withTransactionGuard). */
export function guardScope(): GuardState | undefined {
  return guards.getStore();
}

/**
 * Runs `fn` with `guard` on the organization transactions it starts; once `fn` is done,
 * waits for the verdict (`settle`, when no transaction sent the check, decides instead).
 */
export async function withTransactionGuard<T>(
  guard: TransactionGuard,
  settle: () => Promise<void>,
  fn: () => Promise<T>,
): Promise<T> {
  const state: GuardState = { guard };
  const result = await guards.run(state, fn);
  await (state.verdict ?? settle());
  return result;
}
