import { describe, expect, it } from 'vitest';
import { type ActionOptions, ActionRunner, type ActionState } from '../../web/src/components/use-action.js';

/** A request the test answers when it wants to. */
function held<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

function runner<A extends unknown[]>(work: (...args: A) => Promise<unknown>, options: ActionOptions = {}) {
  const published: ActionState[] = [];
  const r = new ActionRunner<A>(
    work,
    (s) => published.push(s),
    () => options,
  );
  return { r, published, last: () => published.at(-1) };
}

describe('web app action runner (useAction)', () => {
  it('is busy while the request runs, then not, and returns whether it succeeded', async () => {
    const request = held();
    const { r, published, last } = runner(() => request.promise);
    const done = r.run();
    expect(last()).toEqual({ busy: true, error: null });
    request.resolve();
    expect(await done).toBe(true);
    expect(last()).toEqual({ busy: false, error: null });
    expect(published).toHaveLength(2);
  });

  it('ignores a second run while one is in flight: a double click sends once', async () => {
    const request = held();
    const sent: string[] = [];
    const { r } = runner((what: string) => {
      sent.push(what);
      return request.promise;
    });
    const first = r.run('first');
    expect(await r.run('second')).toBe(false);
    request.resolve();
    expect(await first).toBe(true);
    expect(sent).toEqual(['first']);
    // Once it answered, the next run goes out.
    await r.run('third');
    expect(sent).toEqual(['first', 'third']);
  });

  it('shows the error, calls onError first, and clears it when the next run starts', async () => {
    const failure = new Error('refused');
    const seen: unknown[] = [];
    let fail = true;
    const { r, last } = runner(
      async () => {
        if (fail) throw failure;
      },
      { onError: (e) => seen.push(e) },
    );
    expect(await r.run()).toBe(false);
    expect(last()).toEqual({ busy: false, error: failure });
    expect(seen).toEqual([failure]);
    fail = false;
    const again = r.run();
    expect(last()).toEqual({ busy: true, error: null });
    expect(await again).toBe(true);
    expect(last()).toEqual({ busy: false, error: null });
  });

  it("keeps a form's own error until the next run, and keeps busy while running", async () => {
    const request = held();
    const { r, last } = runner(() => request.promise);
    r.setError(new Error('The two new passwords differ.'));
    expect(last()).toEqual({ busy: false, error: new Error('The two new passwords differ.') });
    const done = r.run();
    r.setError(null);
    expect(last()).toEqual({ busy: true, error: null });
    request.resolve();
    await done;
  });

  it('stays busy after a success that leaves the page (busyAfterSuccess)', async () => {
    const { r, last } = runner(async () => {}, { busyAfterSuccess: true });
    expect(await r.run()).toBe(true);
    expect(last()).toEqual({ busy: true, error: null });
    // A failure still gives the buttons back.
    const failing = runner(
      async () => {
        throw new Error('no');
      },
      { busyAfterSuccess: true },
    );
    await failing.r.run();
    expect(failing.last()?.busy).toBe(false);
  });

  it('sets nothing once the component is gone, whether the request succeeds or fails', async () => {
    for (const outcome of ['resolve', 'reject'] as const) {
      const request = held();
      const seen: unknown[] = [];
      const { r, published } = runner(() => request.promise, { onError: (e) => seen.push(e) });
      const done = r.run();
      expect(published).toHaveLength(1);
      r.dispose();
      if (outcome === 'resolve') request.resolve();
      else request.reject(new Error('late'));
      expect(await done).toBe(outcome === 'resolve');
      expect(published).toHaveLength(1);
      expect(seen).toEqual([]);
      r.setError(new Error('after'));
      expect(published).toHaveLength(1);
    }
  });
});
