import { useState } from 'preact/hooks';

/*
 * Form input kept in sessionStorage, so what was typed survives a session that ended
 * mid-form: the 401 sends the person to sign-in and, signed in again, back to the form,
 * which mounts afresh. This tab only, gone when it closes. Never for passwords or secrets.
 */

const PREFIX = 'tagtrail.form.';

/** What is kept under `key`, as stored (the caller checks its shape); undefined when nothing. */
export function readKept(key: string): unknown {
  try {
    const stored = sessionStorage.getItem(PREFIX + key);
    return stored === null ? undefined : JSON.parse(stored);
  } catch {
    return undefined;
  }
}

export function writeKept(key: string, value: unknown): void {
  try {
    sessionStorage.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    // Storage full or refused: the form still works, it just is not kept.
  }
}

export function forgetKept(key: string): void {
  try {
    sessionStorage.removeItem(PREFIX + key);
  } catch {
    // As above.
  }
}

/** One field's state, kept as it is typed. `clear` forgets it (after a save). */
export function useKeptInput<T>(key: string, initial: T): [T, (value: T) => void, () => void] {
  const [value, setValue] = useState<T>(() => {
    const stored = readKept(key);
    return stored === undefined ? initial : (stored as T);
  });
  const set = (next: T) => {
    setValue(next);
    writeKept(key, next);
  };
  const clear = () => {
    setValue(initial);
    forgetKept(key);
  };
  return [value, set, clear];
}

const OWNER_KEY = 'tagtrail.form-owner';

/** Removes every form's kept input (sign-out: the next person at this tab must not see it). */
export function forgetKeptInput(): void {
  try {
    for (const key of Object.keys(sessionStorage)) {
      if (key.startsWith(PREFIX)) sessionStorage.removeItem(key);
    }
    sessionStorage.removeItem(OWNER_KEY);
  } catch {
    // Storage refused: nothing was kept either.
  }
}

/**
 * Kept input belongs to whoever typed it: a sign-in as another person (or organization) at
 * the same tab forgets it, so nobody sees text someone else left unsent.
 */
export function keepInputFor(owner: string): void {
  try {
    if (sessionStorage.getItem(OWNER_KEY) === owner) return;
    forgetKeptInput();
    sessionStorage.setItem(OWNER_KEY, owner);
  } catch {
    // As above.
  }
}
