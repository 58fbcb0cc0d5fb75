/**
 * Request decoding (API-SPEC Conventions, Errors, Limits): malformed and oversized bodies, DELETE
 * bodies, and arbitrary input, on the probe routes (see probe-requests.ts).
 */
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { bearer } from '../helpers/app.js';
import { expectErrorEnvelope, expectSurfaceHeaders } from '../helpers/error-envelope.js';
import { PROBE_TAG_TYPES } from '../helpers/probe-routes.js';
import {
  BODY_LIMIT,
  expectAccepted,
  expectBadRequest,
  expectOneField,
  useProbeApp,
} from './probe-requests.js';

const { probe, post, patch, postJson } = useProbeApp();

describe('decoding failures are bad_request without fields', () => {
  it.each([
    ['truncated', '{"name":'],
    ['unquoted key', '{name: "a"}'],
    ['single quotes', "{'name':'a'}"],
    ['trailing comma', '{"name":"a",}'],
    ['trailing garbage', '{"name":"a"} x'],
    ['NaN', '{"name":"a","ref_id":NaN}'],
    ['a lone brace', '{'],
  ])('invalid JSON (%s): 400 bad_request', async (_name, body) => {
    expectBadRequest(await post(body));
    expectBadRequest(await patch(body));
  });

  it.each([
    ['array', '[]'],
    ['array of objects', '[{"name":"a"}]'],
    ['string', '"name"'],
    ['number', '42'],
    ['boolean', 'true'],
    ['null', 'null'],
  ])('top-level %s: 400 bad_request', async (_name, body) => {
    expectBadRequest(await post(body), /must be a JSON object/);
    expectBadRequest(await patch(body), /must be a JSON object/);
  });

  it('PATCH body literal null: bad_request whose detail says the body must be a JSON object', async () => {
    const error = expectBadRequest(await patch('null'));
    expect(error.detail).toMatch(/body must be a JSON object/);
  });

  it.each([
    ['empty', ''],
    ['whitespace only', '  \n\t '],
  ])('%s body on POST and PATCH: 400 bad_request', async (_name, body) => {
    expectBadRequest(await post(body));
    expectBadRequest(await patch(body));
  });

  it.each([
    ['on an id field', '{"name":"a","ref_id":99999999999999999999999}'],
    ['on a string field', '{"name":99999999999999999999999}'],
    ['negative', '{"name":"a","ref_id":-99999999999999999999999}'],
    [
      'nested in an array',
      '{"name":"a","tags":[{"tag_type":"rfid","value":"v","n":[1,99999999999999999999999]}]}',
    ],
    ['under an unknown key', '{"name":"a","whatever":{"deep":99999999999999999999999}}'],
    ['one above int64', '{"name":"a","ref_id":9223372036854775808}'],
    ['one below int64', '{"name":"a","ref_id":-9223372036854775809}'],
  ])('an integer beyond int64 %s: 400 bad_request', async (_name, body) => {
    expectBadRequest(await post(body));
    expectBadRequest(await patch(body));
  });

  it('digits inside a string are not numbers', async () => {
    const data = expectAccepted(await postJson({ name: '99999999999999999999999' }));
    expect(data.received).toEqual({ name: '99999999999999999999999' });
  });
});

describe('body size limit', () => {
  it('a body over the limit: 413 payload_too_large (POST and PATCH)', async () => {
    const body = JSON.stringify({ name: 'a'.repeat(BODY_LIMIT + 10) });
    expectErrorEnvelope(await post(body), { status: 413, type: 'payload_too_large' });
    expectErrorEnvelope(await patch(body), { status: 413, type: 'payload_too_large' });
  });

  it('a body just under the limit is decoded and validated', async () => {
    const body = JSON.stringify({ name: 'a'.repeat(BODY_LIMIT - 100) });
    expect(expectOneField(await post(body))).toMatchObject({ field: 'name', code: 'too_long' });
  });
});

describe('DELETE ignores its body', () => {
  it.each([
    ['text/plain', 'hello'],
    ['application/json', 'not json'],
    ['application/json', 'null'],
  ])('DELETE with %s %j: 204', async (type, payload) => {
    const res = await probe.t.app.inject({
      method: 'DELETE',
      url: '/api/v1/probes/1',
      headers: { ...bearer(probe.token), 'content-type': type },
      payload,
    });
    expectSurfaceHeaders(res);
    expect(res.statusCode).toBe(204);
  });
});

describe('properties: arbitrary input never yields a 5xx', () => {
  const KNOWN = ['name', 'ref_id', 'observed_at', 'description', 'tags', 'external_key', 'tag_type', 'value'];
  const key = fc.oneof(fc.constantFrom(...KNOWN), fc.string(), fc.constantFrom('__proto__', 'constructor'));
  const tag = fc.dictionary(key, fc.oneof(fc.constantFrom(...PROBE_TAG_TYPES), fc.jsonValue()), {
    maxKeys: 4,
  });
  const objects = fc.dictionary(
    key,
    fc.oneof(
      fc.jsonValue(),
      fc.array(tag, { maxLength: 3 }),
      fc.constantFrom('2024-01-01T00:00:00Z', 'a', 1),
    ),
    { maxKeys: 6 },
  );
  const bodies = fc.oneof(
    fc.json(),
    fc.string(),
    fc.string({ unit: 'binary' }),
    objects.map((o) => JSON.stringify(o)),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.bigInt().map((n) => `{"name":"a","ref_id":${n}}`),
  );

  function expectContractual(res: LightMyRequestResponse, sent: string, ok: number) {
    expect(res.statusCode, `${res.raw.req.method} ${sent} -> ${res.body}`).toBeLessThan(500);
    if (res.statusCode >= 400) {
      const error = expectErrorEnvelope(res);
      expect(['bad_request', 'validation_error']).toContain(error.type);
    } else {
      expect(res.statusCode).toBe(ok);
      expectSurfaceHeaders(res);
      expect(res.json().data.received).toEqual(JSON.parse(sent));
    }
  }

  // Hundreds of requests each: seconds alone, but several times that on a loaded machine.
  const PROPERTY_TIMEOUT_MS = 180_000;

  it(
    'POST /api/v1/probes with arbitrary bodies',
    async () => {
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          expectContractual(await post(body), body, 201);
        }),
        { numRuns: 400 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'PATCH /api/v1/probes/:probe_id with arbitrary bodies',
    async () => {
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          expectContractual(await patch(body), body, 200);
        }),
        { numRuns: 400 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'arbitrary path ids and query strings',
    async () => {
      const query = fc.dictionary(fc.oneof(fc.constantFrom('limit', 'offset'), fc.string()), fc.string(), {
        maxKeys: 3,
      });
      await fc.assert(
        fc.asyncProperty(fc.string({ minLength: 1 }), query, async (id, q) => {
          const qs = new URLSearchParams(q).toString();
          for (const url of [`/api/v1/probes/${encodeURIComponent(id)}`, `/api/v1/probes?${qs}`]) {
            const res = await probe.t.app.inject({ method: 'GET', url, headers: bearer(probe.token) });
            expect(res.statusCode, `${url} -> ${res.body}`).toBeLessThan(500);
            if (res.statusCode >= 400) {
              expect(['validation_error', 'not_found']).toContain(expectErrorEnvelope(res).type);
            }
          }
        }),
        { numRuns: 300 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
