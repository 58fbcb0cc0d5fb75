import { request } from 'node:http';

/** A GET /internal/live opened over a real socket (an event stream does not end, so it is read as it comes). */
export interface Stream {
  status: number;
  /** The response's x-request-id: the request id of the stream's log line. */
  requestId: string | undefined;
  changes: unknown[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/**
 * Opens the stream as a browser would, on the server at `base`; resolves once it is ready
 * (or answered another status, or ended first), and collects the `change` events' data.
 */
export function openStream(base: string, cookie: string | null): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/internal/live`, {
      headers: { accept: 'text/event-stream', ...(cookie ? { cookie } : {}) },
    });
    req.on('response', (res) => {
      const changes: unknown[] = [];
      let buffer = '';
      let ready = false;
      const ended = new Promise<void>((done) => res.on('end', done));
      const result = {
        status: res.statusCode ?? 0,
        requestId: res.headers['x-request-id'] as string | undefined,
        changes,
        ended,
        close: () => req.destroy(),
      };
      if (res.statusCode !== 200) {
        res.resume();
        resolve(result);
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === 'ready' && !ready) {
            ready = true;
            resolve(result);
          }
          if (event === 'change' && data) changes.push(JSON.parse(data));
        }
      });
      // Ended before it was ready (the session ended meanwhile): the caller sees `ended`.
      res.on('end', () => resolve(result));
    });
    req.on('error', reject);
    req.end();
  });
}
