import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveDeliveryAddress } from './url-guard.js';

export interface SendResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  durationMs: number;
}

// Keep-alive: a busy endpoint gets its events over a few reused connections.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 16 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 16 }),
};

/** How much of a receiver's answer is read (the body is only drained, never kept). */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs one signed event. The host is resolved and checked here, on every attempt, and
 * the socket connects to the checked address (the lookup below returns only it), while
 * TLS still verifies the certificate against the URL's host name. Never throws: any
 * failure is a result with the reason.
 */
export async function sendWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; allowPrivate: boolean },
): Promise<SendResult> {
  const started = performance.now();
  const done = (status: number | null, error: string | null): SendResult => ({
    ok: status !== null && status >= 200 && status < 300,
    status,
    error,
    durationMs: Math.round(performance.now() - started),
  });
  let target: URL;
  let pinned: { address: string; family: 4 | 6 };
  try {
    target = new URL(url);
    pinned = await resolveDeliveryAddress(target.hostname, options.allowPrivate);
  } catch (err) {
    return done(null, (err as Error).message);
  }
  const lookup: LookupFunction = (_host, opts, callback) => {
    if ((opts as { all?: boolean }).all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    const req = client.request(
      target,
      {
        method: 'POST',
        agent: agents[target.protocol as 'http:' | 'https:'],
        lookup,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'tagtrail-webhooks',
        },
      },
      (res) => {
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > MAX_ANSWER_BYTES) res.destroy();
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve(
            done(
              res.statusCode ?? null,
              res.statusCode && res.statusCode < 300 ? null : `HTTP ${res.statusCode}`,
            ),
          );
        });
        res.on('error', () => {
          clearTimeout(timer);
          resolve(done(res.statusCode ?? null, `HTTP ${res.statusCode}`));
        });
      },
    );
    // One bound for the whole exchange: connecting, sending and the answer.
    const timer = setTimeout(
      () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    req.on('error', (err) => {
      clearTimeout(timer);
      resolve(done(null, err.message));
    });
    req.end(body);
  });
}
