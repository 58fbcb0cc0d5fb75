import { Writable } from 'node:stream';
import Fastify, { type FastifyServerOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { maskUrl, REDACTED, withRedaction } from './log-redaction.js';

describe('maskUrl', () => {
  it('masks the values of secret query parameters, whatever their case or escaping, and keeps the rest', () => {
    expect(maskUrl('/api/v1/assets?limit=5&token=abc&api_key=def')).toBe(
      `/api/v1/assets?limit=5&token=${REDACTED}&api_key=${REDACTED}`,
    );
    expect(maskUrl('/x?PASSWORD=p1&Secret=s1&access_token=t1')).toBe(
      `/x?PASSWORD=${REDACTED}&Secret=${REDACTED}&access_token=${REDACTED}`,
    );
    expect(maskUrl('/x?api%5Fkey=k1&pass%77ord=p2')).toBe(`/x?api%5Fkey=${REDACTED}&pass%77ord=${REDACTED}`);
    expect(maskUrl('https://h.example/x?a=1&token=t#frag')).toBe(
      `https://h.example/x?a=1&token=${REDACTED}#frag`,
    );
  });

  it('leaves URLs without secrets alone, malformed escapes included', () => {
    for (const url of ['/x', '/x?', '/x?token', '/x?tokens=1&q=token', '/x?%E0%A4%A=1', '/x?a=%zz']) {
      expect(maskUrl(url)).toBe(url);
    }
  });
});

describe('withRedaction', () => {
  /** What a Fastify logger with the masking writes for one line of these fields. */
  const logged = async (redact: string[], fields: object) => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const logger = withRedaction({ level: 'info', stream, redact } as FastifyServerOptions['logger']);
    const app = Fastify({ logger });
    app.log.info(fields, 'probe');
    await app.close();
    return lines.join('');
  };

  it('masks headers, secret fields and URLs wherever a log line carries them; keeps the caller’s own paths', async () => {
    const out = await logged(['extra.value'], {
      headers: {
        authorization: 'Bearer h-secret-1',
        cookie: 'tagtrail_session=h-secret-2',
        accept: 'text/html',
      },
      req: { method: 'GET', url: '/a?token=q-secret-1', hostname: 'h', ip: '127.0.0.1' },
      url: '/b?password=q-secret-2',
      query: { api_key: 'q-secret-3' },
      body: { password: 'b-secret-1' },
      secret: 'f-secret-1',
      extra: { value: 'c-secret-1' },
    });
    expect(out).not.toMatch(/secret-\d/);
    expect(out).toContain('text/html');
    expect(out).toContain('"method":"GET"');
  });

  it('no logger stays none', () => {
    expect(withRedaction(undefined)).toBe(false);
    expect(withRedaction(false)).toBe(false);
  });
});
