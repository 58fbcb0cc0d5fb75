import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';

export interface CertificateFiles {
  cert: string;
  key: string;
}

/**
 * A self-signed certificate for localhost and 127.0.0.1 made by the openssl CLI, written to
 * `<dir>/<name>.cert.pem` and `<dir>/<name>.key.pem` (or to the paths given, to replace a
 * pair in place), valid for `days` (1 unless given).
 */
export function selfSignedCertificate(
  dir: string,
  name: string,
  paths: CertificateFiles = { cert: join(dir, `${name}.cert.pem`), key: join(dir, `${name}.key.pem`) },
  days = 1,
): CertificateFiles {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      String(days),
      '-subj',
      `/CN=${name}`,
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      paths.key,
      '-out',
      paths.cert,
    ],
    { stdio: 'ignore' },
  );
  return paths;
}

/** The SHA-256 fingerprint of a PEM certificate file, as tls reports a peer's. */
export function fingerprintOf(certFile: string): string {
  return new X509Certificate(readFileSync(certFile)).fingerprint256;
}

/** The fingerprint of the certificate a TLS listener serves to a new connection now. */
export function servedFingerprint(port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host, rejectUnauthorized: false }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.once('error', reject);
  });
}
