/**
 * The probe routes of test/helpers/probe-routes.ts, which use the shared schema builders (Id,
 * TimestampIn, Nullable, PageQuery, ExternalKey) the real endpoints use, called with a valid key,
 * and the expectations the body-rules tests share.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { bearer, buildTestApp, type TestApp } from '../helpers/app.js';
import {
  type ErrorBody,
  expectErrorEnvelope,
  expectSurfaceHeaders,
  expectValidationError,
} from '../helpers/error-envelope.js';
import { probeRoutes } from '../helpers/probe-routes.js';

export const BODY_LIMIT = 1048576;
const JSON_TYPE = { 'content-type': 'application/json' };
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

/** An app with the probe routes and a key for it, built before the file's tests and closed after. */
export function useProbeApp() {
  const probe = { t: undefined as unknown as TestApp, token: '' };
  beforeAll(async () => {
    probe.t = await buildTestApp({ routes: [probeRoutes], bodyLimit: BODY_LIMIT });
    probe.token = (await (await probe.t.createOrg()).key()).token;
  });
  afterAll(() => probe.t.close());

  const post = (payload: string, headers: Record<string, string> = JSON_TYPE) =>
    probe.t.app.inject({
      method: 'POST',
      url: '/api/v1/probes',
      headers: { ...bearer(probe.token), ...headers },
      payload,
    });

  const patch = (payload: string, id = '1') =>
    probe.t.app.inject({
      method: 'PATCH',
      url: `/api/v1/probes/${id}`,
      headers: { ...bearer(probe.token), ...MERGE_PATCH },
      payload,
    });

  const postJson = (body: unknown) => post(JSON.stringify(body));
  const patchJson = (body: unknown, id?: string) => patch(JSON.stringify(body), id);

  const list = (query: string) =>
    probe.t.app.inject({ method: 'GET', url: `/api/v1/probes?${query}`, headers: bearer(probe.token) });

  return { probe, post, patch, postJson, patchJson, list };
}

export function expectBadRequest(res: LightMyRequestResponse, detail?: RegExp): ErrorBody {
  const error = expectErrorEnvelope(res, { status: 400, type: 'bad_request', ...(detail ? { detail } : {}) });
  expect(error).not.toHaveProperty('fields');
  return error;
}

/** The single field error of a `validation_error` response. */
export function expectOneField(res: LightMyRequestResponse) {
  const fields = expectValidationError(res);
  expect(fields).toHaveLength(1);
  return fields[0]!;
}

export function expectAccepted(res: LightMyRequestResponse, status = 201) {
  expectSurfaceHeaders(res);
  expect(res.statusCode, res.body).toBe(status);
  return res.json().data;
}
