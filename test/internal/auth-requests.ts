import { freshAddress, type InternalTestApp } from './helpers.js';

/** The signed-out auth requests as a browser on its own address sends them. */
export const json = { 'content-type': 'application/json' };

export function signUpRequest(
  t: InternalTestApp,
  body: Record<string, unknown>,
  remoteAddress = freshAddress(),
) {
  return t.app.inject({
    method: 'POST',
    url: '/internal/auth/sign-up',
    remoteAddress,
    headers: json,
    payload: JSON.stringify(body),
  });
}

export function signIn(t: InternalTestApp, email: string, password: string, remoteAddress = freshAddress()) {
  return t.app.inject({
    method: 'POST',
    url: '/internal/auth/sign-in',
    remoteAddress,
    headers: json,
    payload: JSON.stringify({ email, password }),
  });
}

export function signUpState(t: InternalTestApp) {
  return t.app.inject({ method: 'GET', url: '/internal/auth/sign-up-state', remoteAddress: freshAddress() });
}
