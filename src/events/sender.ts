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
    // Settled once, by whichever comes first. Once the status line is in, it decides (a
    // delivery is a 2xx within the bound): the body is only drained for the connection's
    // reuse, and a body cut off (too long, too slow, connection closed) changes nothing.
    // Destroyed responses emit no 'end' and a destroyed request no 'error' once answered,
    // so each way out settles here itself; an unsettled send would hold its slot forever
    // and keep the stop waiting.
    let settled = false;
    const settle = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    let status: number | null = null;
    const verdict = () =>
      done(status, status !== null && status >= 200 && status < 300 ? null : `HTTP ${status}`);
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
        status = res.statusCode ?? null;
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > MAX_ANSWER_BYTES) {
            settle(verdict());
            res.destroy();
          }
        });
        res.on('end', () => settle(verdict()));
        res.on('close', () => settle(verdict()));
        res.on('error', () => settle(verdict()));
      },
    );
    // One bound for the whole exchange: connecting, sending and the answer's status line.
    const timer = setTimeout(() => {
      if (status !== null) settle(verdict());
      else settle(done(null, `no answer within ${options.timeoutMs} ms`));
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (err) => settle(status !== null ? verdict() : done(null, err.message)));
    req.end(body);
  });
}
