import { useState } from 'preact/hooks';

/**
 * Form state kept in sessionStorage, so what was typed survives a session that ended
 * mid-form: the 401 sends the person to sign-in and, signed in again, back to the form,
 * which mounts afresh. Never for passwords or secrets. `clear` forgets it (after a save).
 */
export function useKeptInput<T>(key: string, initial: T): [T, (value: T) => void, () => void] {
  const storageKey = `tagtrail.form.${key}`;
  const [value, setValue] = useState<T>(() => {
    try {
      const stored = sessionStorage.getItem(storageKey);
      return stored === null ? initial : (JSON.parse(stored) as T);
    } catch {
      return initial;
    }
  });
  const set = (next: T) => {
    setValue(next);
    try {
      sessionStorage.setItem(storageKey, JSON.stringify(next));
    } catch {
      // Storage full or refused: the form still works, it just is not kept.
    }
  };
  const clear = () => {
    setValue(initial);
    try {
      sessionStorage.removeItem(storageKey);
    } catch {
      // As above.
    }
  };
  return [value, set, clear];
}

const OWNER_KEY = 'tagtrail.form-owner';

/** Removes every form's kept input (sign-out: the next person at this tab must not see it). */
export function forgetKeptInput(): void {
  try {
    for (const key of Object.keys(sessionStorage)) {
      if (key.startsWith('tagtrail.form.')) sessionStorage.removeItem(key);
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
