/** Exit status of an import that refused at least one row or line (the others may be written). */
export const EXIT_REFUSED = 3;

export interface ProgressBar {
  /** `fraction` of the work done (0..1), or null when the total is not known; `text` after the bar. */
  update(fraction: number | null, text: string, final?: boolean): void;
  /** Clears the bar's line. */
  finish(): void;
}

/**
 * A one-line bar on a terminal, redrawn in place at most ten times a second; nothing at
 * all when `stream` is not a terminal, so redirected output and logs stay clean.
 */
export function progressBar(stream: NodeJS.WriteStream): ProgressBar {
  if (!stream.isTTY) return { update: () => undefined, finish: () => undefined };
  let last = 0;
  let drawn = false;
  return {
    update(fraction, text, final = false) {
      const now = Date.now();
      if (now - last < 100 && !final) return;
      last = now;
      drawn = true;
      const width = 30;
      const filled = fraction === null ? 0 : Math.round(Math.min(1, Math.max(0, fraction)) * width);
      const bar = fraction === null ? '' : `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] `;
      stream.write(`\r${bar}${text}\x1b[K`);
    },
    finish() {
      if (drawn) stream.write('\r\x1b[K');
    },
  };
}
