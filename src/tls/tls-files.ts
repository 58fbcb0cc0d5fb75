import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

/** A PEM certificate (with its chain) and its private key, as read from their files. */
export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

/** Where a listener's certificate and key come from: two settings naming two files. */
export interface TlsFiles {
  certVar: string;
  keyVar: string;
  certFile?: string | undefined;
  keyFile?: string | undefined;
}

/** A setting's file is missing, unreadable, or not a certificate and its key. */
export class TlsFilesError extends Error {}

/**
 * Reads and checks a listener's pair: both settings or neither (undefined), each file
 * readable, and the two a certificate and the key that goes with it (Node builds a secure
 * context from them), so a mistake stops the start, or a reload, naming the setting.
 */
export function readTlsPair(files: TlsFiles): TlsPair | undefined {
  const { certVar, keyVar, certFile, keyFile } = files;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new TlsFilesError(`${certVar} and ${keyVar} must be set together`);
  const read = (name: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new TlsFilesError(`${name}: cannot read ${file}: ${(err as Error).message}`);
    }
  };
  const pair = { cert: read(certVar, certFile), key: read(keyVar, keyFile) };
  try {
    createSecureContext(pair);
  } catch (err) {
    throw new TlsFilesError(
      `${certVar}/${keyVar}: not a PEM certificate and its key (${(err as Error).message})`,
    );
  }
  return pair;
}

/** When the (first) certificate of a PEM chain ends. */
export function notAfter(cert: Buffer): Date {
  return new Date(new X509Certificate(cert).validTo);
}

/** What the start-up and reload lines say of a certificate: whom it names and until when. */
/** A certificate ending sooner than this is worth a warning at start and at each renewal taken. */
export const EXPIRY_WARNING_DAYS = 14;

/** What the log says of a certificate: its subject, the names it serves, when it ends. */
export function describeCertificate(cert: Buffer): {
  subject: string;
  names: string | null;
  valid_to: string;
  expires_in_days: number;
} {
  const x509 = new X509Certificate(cert);
  const validTo = new Date(x509.validTo);
  return {
    // Node writes a distinguished name one attribute a line.
    subject: x509.subject.split('\n').join(', '),
    names: x509.subjectAltName ?? null,
    valid_to: validTo.toISOString(),
    expires_in_days: Math.floor((validTo.getTime() - Date.now()) / 86_400_000),
  };
}

/**
 * What a warning says of a certificate's end, or undefined when it is not near: one already
 * past its end was said to expire "soon", which reads as time left to renew it.
 */
export function expiryNote(expiresInDays: number): 'has expired' | 'expires soon' | undefined {
  if (expiresInDays < 0) return 'has expired';
  return expiresInDays < EXPIRY_WARNING_DAYS ? 'expires soon' : undefined;
}

export function samePair(a: TlsPair, b: TlsPair): boolean {
  return a.cert.equals(b.cert) && a.key.equals(b.key);
}

/** Whether a listen address is this machine only (nothing sent to it crosses a network). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}
