import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  describeCertificate,
  expiryNote,
  notAfter,
  readTlsPair,
  samePair,
  type TlsFiles,
  type TlsPair,
} from './tls-files.js';

/** A TLS listener whose certificate can be replaced while it runs. */
export interface TlsListener {
  /** For the log: `https`, `mqtts`. */
  name: string;
  files: TlsFiles;
  /** The pair it serves now. */
  current: TlsPair;
  /** Serves `pair` to the connections that start from now on (tls.Server#setSecureContext). */
  apply(pair: TlsPair): void;
}

export type ReloadOutcome =
  | { listener: string; outcome: 'unchanged' | 'reloaded' }
  | { listener: string; outcome: 'refused'; error: string };

export interface ReloadLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** How often the files are looked at, so a renewal that sends no signal is picked up too. */
export const TLS_CHECK_INTERVAL_MS = 60_000;

/**
 * Picks up renewed certificates without a restart: on `reload()` (SIGHUP) and every
 * TLS_CHECK_INTERVAL_MS, each listener's files are read again, and a pair that changed and
 * checks out is served to new connections; open ones keep theirs. A pair that does not
 * check out (a key written before its certificate, a file half copied) is refused and the
 * listener keeps the one it has; the refusal is logged once for the same files' contents.
 */
export class CertificateReloader {
  private timer: NodeJS.Timeout | undefined;
  private readonly refused = new Map<string, string>();

  constructor(
    private readonly listeners: TlsListener[],
    private readonly log: ReloadLog,
    private readonly intervalMs = TLS_CHECK_INTERVAL_MS,
  ) {}

  get active(): boolean {
    return this.listeners.length > 0;
  }

  start(): void {
    if (!this.active || this.timer) return;
    this.timer = setInterval(() => this.reload(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** When the certificate each listener serves now ends. */
  served(): Array<{ listener: string; notAfter: Date }> {
    return this.listeners.map((l) => ({ listener: l.name, notAfter: notAfter(l.current.cert) }));
  }

  reload(): ReloadOutcome[] {
    return this.listeners.map((listener) => this.reloadOne(listener));
  }

  private reloadOne(listener: TlsListener): ReloadOutcome {
    try {
      const pair = readTlsPair(listener.files);
      if (!pair) throw new Error('the settings name no files');
      if (samePair(pair, listener.current)) {
        this.refused.delete(listener.name);
        return { listener: listener.name, outcome: 'unchanged' };
      }
      // Runs from a timer too: whatever it throws is a refusal, never an uncaught error.
      listener.apply(pair);
      listener.current = pair;
    } catch (err) {
      return this.refuse(listener, (err as Error).message);
    }
    this.refused.delete(listener.name);
    const certificate = { listener: listener.name, ...describeCertificate(listener.current.cert) };
    // A renewal that brought a certificate as close to its end says so, as a start does.
    const note = expiryNote(certificate.expires_in_days);
    if (note) {
      this.log.warn(certificate, `TLS certificate reloaded; it ${note}: renew it`);
    } else {
      this.log.info(certificate, 'TLS certificate reloaded');
    }
    return { listener: listener.name, outcome: 'reloaded' };
  }

  private refuse(listener: TlsListener, error: string): ReloadOutcome {
    const seen = `${error} ${this.fingerprint(listener.files)}`;
    if (this.refused.get(listener.name) !== seen) {
      this.refused.set(listener.name, seen);
      this.log.warn(
        { listener: listener.name, err: error },
        'TLS certificate not reloaded; the one in use stays',
      );
    }
    return { listener: listener.name, outcome: 'refused', error };
  }

  /** What the files hold now, so the same broken pair is reported once, a new one again. */
  private fingerprint(files: TlsFiles): string {
    const hash = createHash('sha256');
    for (const file of [files.certFile, files.keyFile]) {
      try {
        if (file) hash.update(readFileSync(file));
      } catch {
        hash.update('unreadable');
      }
      hash.update('\0');
    }
    return hash.digest('hex');
  }
}
