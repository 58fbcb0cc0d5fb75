import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../db/unavailable.js';
import { OUTAGE_CAUSE_LOG_INTERVAL_MS, registerErrorHandler, toApiError } from './error-handler.js';

const pgError = (code: string) => Object.assign(new Error('from the server'), { code });

describe('toApiError of a transaction aborted by deadlocks (src/db/transient-conflict.ts)', () => {
  it('still so after the last attempt, answers 503 with Retry-After, not 500', () => {
    const answer = toApiError(pgError('40P01'), 1024);
    expect(answer?.type).toBe('service_unavailable');
    expect(answer?.headers?.['retry-after']).toMatch(/^\d+$/);
  });
});

describe('the cause of an outage in the log', () => {
  const appWithOutage = async (lines: { msg: string; suppressed?: number; err?: string }[]) => {
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = Fastify({ logger: { level: 'info', stream } });
    registerErrorHandler(app, 1024);
    app.get('/refused', () => {
      throw new DatabaseUnavailableError(
        Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      );
    });
    app.get('/full', () => {
      throw Object.assign(new Error('could not extend file "base/5/16384": No space left on device'), {
        code: '53100',
      });
    });
    await app.ready();
    return app;
  };

  it('is logged once a second per kind of cause, with the count left out, while every request is answered 503', async () => {
    const lines: { msg: string; suppressed?: number; err?: string }[] = [];
    const app = await appWithOutage(lines);
    const causes = () => lines.filter((l) => l.msg === 'database unavailable; answered 503');
    for (let i = 0; i < 40; i++) {
      expect((await app.inject({ method: 'GET', url: '/refused' })).statusCode).toBe(503);
      expect((await app.inject({ method: 'GET', url: '/full' })).statusCode).toBe(503);
    }
    expect(causes().map((l) => l.err)).toEqual([
      'database unavailable: connect ECONNREFUSED',
      'could not extend file "base/5/16384": No space left on device',
    ]);
    expect(causes().some((l) => 'suppressed' in l)).toBe(false);
    // Every request still has its own line.
    expect(lines.filter((l) => l.msg === 'request completed')).toHaveLength(80);

    await new Promise((r) => setTimeout(r, OUTAGE_CAUSE_LOG_INTERVAL_MS + 100));
    await app.inject({ method: 'GET', url: '/refused' });
    expect(causes()).toHaveLength(3);
    expect(causes()[2]).toMatchObject({ suppressed: 39 });
    await app.close();
  });
});
