import { connect, type Socket } from 'node:net';

/** One HTTP response as read off the wire. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The parsed JSON body, when it is JSON. */
  json: unknown;
  /** How the connection ended after the response: closed by the server, or still open. */
  closed: boolean;
  /** A socket error seen while sending or reading (e.g. ECONNRESET), if any. */
  error?: string;
}

/** Bytes of one request, with CRLF line ends; the headers block is completed with an empty line. */
export function requestBytes(requestLine: string, headers: Record<string, string> = {}, body = ''): string {
  const lines = [requestLine, 'Host: localhost', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

function parse(buffer: Buffer): { response: Omit<RawResponse, 'closed' | 'error'>; length: number } | null {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine = '', ...headerLines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? Number.NaN);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (buffer.length < end + 4 + length) return null;
  const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { response: { status, headers, body, json }, length: end + 4 + length };
}

/**
 * Sends raw bytes over a new TCP connection and reads one response (Content-Length framed),
 * then waits up to `closeWithinMs` to see whether the server closes the connection.
 */
export function rawRequest(
  port: number,
  bytes: string | Buffer,
  options: { closeWithinMs?: number; timeoutMs?: number } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffer = Buffer.alloc(0);
    let parsed: ReturnType<typeof parse> = null;
    let error: string | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `no complete response within ${options.timeoutMs ?? 10_000} ms: ${buffer.toString('latin1').slice(0, 300)}`,
        ),
      );
    }, options.timeoutMs ?? 10_000);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      if (parsed) resolve({ ...parsed.response, closed, error });
      else
        reject(
          new Error(
            `connection ended without a response (${error ?? 'closed'}): ${buffer.toString('latin1').slice(0, 300)}`,
          ),
        );
    };
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (parsed) return;
      parsed = parse(buffer);
      if (parsed)
        setTimeout(() => finish(socket.destroyed || socket.readableEnded), options.closeWithinMs ?? 200);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
      if (!parsed) finish(true);
    });
    socket.on('close', () => {
      if (!parsed) finish(true);
    });
    socket.on('end', () => {
      if (parsed) finish(true);
    });
    socket.write(bytes);
  });
}

/** Every complete response in `buffer` (pipelined responses on one connection). */
export function parseResponses(buffer: Buffer): Omit<RawResponse, 'closed' | 'error'>[] {
  const out: Omit<RawResponse, 'closed' | 'error'>[] = [];
  let rest = buffer;
  for (let next = parse(rest); next; next = parse(rest)) {
    out.push(next.response);
    rest = rest.subarray(next.length);
  }
  return out;
}

/** Opens a connection and leaves it open; the caller destroys it. */
export function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}
