import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';

/**
 * One user action that sends a request (save, revoke, attach …) and the state a page shows
 * of it: whether it runs (its buttons are disabled) and the error of its last run. The
 * rules are docs/web-app.md's "Requests in flight": a second run while one is in flight is
 * ignored, so a double click (or Enter pressed twice before the button re-renders disabled)
 * sends once; the error of the previous run is cleared when the next starts; and nothing is
 * set once the component is gone (a save that navigates away, a row removed by its own
 * delete).
 */

export interface ActionState {
  busy: boolean;
  error: unknown;
}

export interface ActionOptions {
  /**
   * The action leaves the page when it succeeds (sign-in, accept an invitation, delete):
   * its buttons stay disabled until the page is gone, so they cannot be pressed again in
   * the moment before.
   */
  busyAfterSuccess?: boolean;
  /** Called with the error, before it is shown (put a control back, close a question). */
  onError?(error: unknown): void;
}

/**
 * The part without Preact, so it can be tested without a browser: `publish` is the
 * component's state setter, and `dispose` is called when the component unmounts.
 */
export class ActionRunner<A extends unknown[]> {
  private state: ActionState = { busy: false, error: null };
  private running = false;
  private alive = true;

  constructor(
    private readonly work: (...args: A) => Promise<unknown>,
    private readonly publish: (state: ActionState) => void,
    private readonly options: () => ActionOptions = () => ({}),
  ) {}

  /** Runs the action; true when it succeeded, false when it failed or another run was in flight. */
  readonly run = async (...args: A): Promise<boolean> => {
    if (this.running) return false;
    this.running = true;
    this.set({ busy: true, error: null });
    try {
      await this.work(...args);
      this.running = false;
      if (!this.options().busyAfterSuccess) this.set({ busy: false });
      return true;
    } catch (error) {
      this.running = false;
      if (this.alive) this.options().onError?.(error);
      this.set({ busy: false, error });
      return false;
    }
  };

  /** Shows an error of the form's own (a check made before anything is sent); null clears it. */
  readonly setError = (error: unknown): void => this.set({ error });

  readonly dispose = (): void => {
    this.alive = false;
  };

  private set(change: Partial<ActionState>): void {
    if (!this.alive) return;
    this.state = { ...this.state, ...change };
    this.publish(this.state);
  }
}

export interface Action<A extends unknown[]> extends ActionState {
  run(...args: A): Promise<boolean>;
  setError(error: unknown): void;
}

/**
 * `fn` may change from render to render (it closes over the form's fields); the run always
 * calls the latest one, and `run` and `setError` stay the same functions.
 */
export function useAction<A extends unknown[]>(
  fn: (...args: A) => Promise<unknown>,
  options: ActionOptions = {},
): Action<A> {
  const [state, setState] = useState<ActionState>({ busy: false, error: null });
  const latest = useRef({ fn, options });
  latest.current = { fn, options };
  const runner = useMemo(
    () =>
      new ActionRunner<A>(
        (...args) => latest.current.fn(...args),
        setState,
        () => latest.current.options,
      ),
    [],
  );
  useEffect(() => runner.dispose, [runner]);
  // A focused button disabled while its request runs drops the focus to the page body, and
  // enabled again it does not get it back: a keyboard user pressing Enter on "Change
  // password" had to find their place again from the top. When the run ends with the focus
  // still lost, it goes back to where it was (unless that is gone or still disabled).
  const focusedAtStart = useRef<Element | null>(null);
  const run = useMemo(
    () =>
      (...args: A): Promise<boolean> => {
        if (!focusLost()) focusedAtStart.current = document.activeElement;
        return runner.run(...args);
      },
    [runner],
  );
  useEffect(() => {
    if (state.busy) return;
    const before = focusedAtStart.current;
    focusedAtStart.current = null;
    if (focusLost() && before instanceof HTMLElement && before.isConnected && !before.matches(':disabled'))
      before.focus();
  }, [state.busy]);
  return { ...state, run, setError: runner.setError };
}

/** True when nothing has the focus but the page itself (the focused control was disabled or removed). */
export const focusLost = (): boolean =>
  document.activeElement === null || document.activeElement === document.body;

/**
 * The focus after a change whose button stays disabled until the reload shows it (a tag's
 * Attach) or goes away with it (a tag's Detach): the button drops the focus to the page
 * body, and useAction's return of it finds the button still disabled, or gone. A keyboard
 * user attaching tags one after another started from the top of the page each time.
 * `focusOnceDone(target)`, called as the change starts, has `target` take the focus once
 * `busy` ends, if the focus is still lost then (a refusal gives it back to the button).
 */
export function useFocusOnceDone(busy: boolean): (target: () => HTMLElement | null) => void {
  const pending = useRef<(() => HTMLElement | null) | null>(null);
  useEffect(() => {
    if (busy || !pending.current) return;
    const target = pending.current;
    pending.current = null;
    if (focusLost()) target()?.focus();
  }, [busy]);
  return useCallback((target) => {
    pending.current = target;
  }, []);
}

/**
 * Between a change's answer and the reload it asked for, the page still shows the record
 * as it was, with its buttons enabled again: a second click there (the second half of a
 * double click, on a fast server) would send the change again. `waiting` holds from
 * `changed()` until the page shows another `record` (the reload's object).
 */
export function useUntilReloaded(record: object | undefined): { waiting: boolean; changed(): void } {
  const [changedOn, setChangedOn] = useState<object | undefined>(undefined);
  const shown = useRef(record);
  shown.current = record;
  return {
    waiting: record !== undefined && changedOn === record,
    changed: () => setChangedOn(shown.current),
  };
}

/**
 * An action that runs whichever request it is given, then has the page reload what it
 * shows (`onChanged`): one per row or card whose buttons send different requests. Given
 * the `record` it shows, it stays busy until the reload has replaced it (useUntilReloaded).
 */
export function useRequestThenReload(
  onChanged: () => void,
  record?: object,
): Action<[request: () => Promise<unknown>]> {
  const reload = useUntilReloaded(record);
  const action = useAction(async (request: () => Promise<unknown>) => {
    await request();
    reload.changed();
    onChanged();
  });
  return { ...action, busy: action.busy || reload.waiting };
}

/** A form's onSubmit that runs `run` instead of the browser's submission. */
export const submitting =
  (run: () => unknown) =>
  (event: Event): void => {
    event.preventDefault();
    void run();
  };
