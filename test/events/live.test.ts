/**
 * GET /internal/live: Server-Sent Events of the session's organization only, over a real
 * socket (an event stream does not end, so it is read as it comes).
 */
import { request } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchEvents } from '../../src/events/dispatcher.js';
import { STREAMS_PER_SESSION } from '../../src/events/internal-routes/live.js';
import { listenOnLoopback } from '../helpers/listening.js';
import { waitFor } from '../ingest/helpers.js';
import {
  type Browser,
  browser,
  buildInternalApp,
  expectInternalError,
  freshAddress,
  type InternalTestApp,
  sessionCookieOf,
  uniqueEmail,
} from '../internal/helpers.js';
import { openStream, type Stream } from './live-stream.js';

let t: InternalTestApp;
let base: string;
beforeAll(async () => {
  t = await buildInternalApp();
  base = `http://127.0.0.1:${await listenOnLoopback(t.app)}`;
});
afterAll(() => t?.close());

const stream = (cookie: string | null) => openStream(base, cookie);

describe('/internal/live', () => {
  it('needs a session', async () => {
    const res = await stream(null);
    expect(res.status).toBe(401);
  });

  it('without Accept: text/event-stream it is a 400 that says so', async () => {
    const me = await t.signUp();
    const res = await me.get('/internal/live');
    expectInternalError(res, { status: 400, type: 'bad_request' });
    expect(res.json().error.detail).toMatch(/text\/event-stream/);
  });

  it('HEAD answers the stream headers and ends, without opening a stream', async () => {
    const me = await t.signUp();
    const answer = await new Promise<{ status: number; type: string | undefined }>((resolve, reject) => {
      const req = request(`${base}/internal/live`, {
        method: 'HEAD',
        headers: { accept: 'text/event-stream', cookie: me.cookie },
        timeout: 5_000,
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] }));
      });
      req.on('timeout', () => req.destroy(new Error('HEAD /internal/live did not answer')));
      req.on('error', reject);
      req.end();
    });
    expect(answer).toEqual({ status: 200, type: 'text/event-stream; charset=utf-8' });
  });

  it("streams the session organization's changes and never another's", async () => {
    const mine: Browser = await t.signUp();
    const theirs: Browser = await t.signUp();
    const mineStream = await stream(mine.cookie);
    const theirStream = await stream(theirs.cookie);
    try {
      const created = await theirs.post('/internal/locations', { name: 'Their dock' });
      expect(created.statusCode).toBe(201);
      const asset = await mine.post('/internal/assets', { name: 'My pallet' });
      expect(asset.statusCode).toBe(201);
      await dispatchEvents(t.database.db);
      const got = await waitFor(
        async () => mineStream.changes,
        (c) => c.length >= 1,
      );
      expect(got).toEqual([
        { types: ['asset.created'], asset_ids: [asset.json().data.id], location_ids: [], truncated: false },
      ]);
      await waitFor(
        async () => theirStream.changes,
        (c) => c.length >= 1,
      );
      expect(theirStream.changes).toEqual([
        {
          types: ['location.created'],
          asset_ids: [],
          location_ids: [created.json().data.id],
          truncated: false,
        },
      ]);
      expect(mineStream.changes).toHaveLength(1);
    } finally {
      mineStream.close();
      theirStream.close();
    }
  });

  /** A change in the organization, dispatched: proves a stream is still open and serving. */
  async function changeIn(b: Browser, s: Stream): Promise<void> {
    const before = s.changes.length;
    const made = await b.post('/internal/locations', { name: `Bay ${Date.now()}` });
    expect(made.statusCode, made.body).toBe(201);
    await dispatchEvents(t.database.db);
    await waitFor(
      async () => s.changes.length,
      (n) => n > before,
    );
  }

  async function signIn(email: string): Promise<Browser> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/internal/auth/sign-in',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email, password: 'correct horse battery' }),
    });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    return browser(t.app, sessionCookieOf(res)!, data.csrf_token, {
      orgId: data.organization.id,
      userId: data.user.id,
      email,
    });
  }

  const sessionIds = async (userId: number) =>
    (
      await t.database.db.pool.query<{ id: string }>(
        'SELECT id FROM web_sessions WHERE user_id = $1 ORDER BY created_at',
        [userId],
      )
    ).rows.map((r) => r.id);

  it(`a session keeps ${STREAMS_PER_SESSION} streams: one more ends its oldest, and another session is not touched`, async () => {
    const me = await t.signUp();
    const other = await signIn(me.email);
    const others = await stream(other.cookie);
    const streams: Stream[] = [];
    try {
      for (let i = 0; i < STREAMS_PER_SESSION; i++) streams.push(await stream(me.cookie));
      streams.push(await stream(me.cookie));
      expect(streams.map((x) => x.status)).toEqual(streams.map(() => 200));
      await streams[0]!.ended;
      // The newest and the other session's still carry changes.
      await changeIn(me, streams.at(-1)!);
      await changeIn(other, others);
      const stillOpen = await Promise.all(
        streams
          .slice(1)
          .map((x) =>
            Promise.race([x.ended.then(() => false), new Promise((r) => setTimeout(r, 200, true))]),
          ),
      );
      expect(stillOpen).toEqual(streams.slice(1).map(() => true));
    } finally {
      for (const x of streams) x.close();
      others.close();
    }
  });

  it("ends at once when its session signs out; the same person's other session streams on", async () => {
    const first = await t.signUp();
    const second = await signIn(first.email);
    const leaving = await stream(first.cookie);
    const staying = await stream(second.cookie);
    try {
      const out = await first.post('/internal/auth/sign-out');
      expect(out.statusCode, out.body).toBe(204);
      await leaving.ended;
      await changeIn(second, staying);
      // The browser's reconnection is refused.
      expect((await stream(first.cookie)).status).toBe(401);
    } finally {
      leaving.close();
      staying.close();
    }
  });

  it("ends a member's streams when an admin removes them, not the admin's", async () => {
    const admin = await t.signUp();
    const email = uniqueEmail('member');
    const invited = await admin.post('/internal/invitations', { email, role: 'viewer' });
    expect(invited.statusCode, invited.body).toBe(201);
    const accepted = await t.app.inject({
      method: 'POST',
      url: '/internal/invitations/accept',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ token: invited.json().token, password: 'correct horse battery' }),
    });
    expect(accepted.statusCode, accepted.body).toBe(201);
    const memberId = accepted.json().data.user.id;
    const memberStream = await stream(`tagtrail_session=${sessionCookieOf(accepted)}`);
    const adminStream = await stream(admin.cookie);
    try {
      expect((await admin.del(`/internal/members/${memberId}`)).statusCode).toBe(204);
      await memberStream.ended;
      await changeIn(admin, adminStream);
    } finally {
      memberStream.close();
      adminStream.close();
    }
  });

  it('ends when another instance revokes the session (the notice comes through the database)', async () => {
    const me = await t.signUp();
    const open = await stream(me.cookie);
    try {
      const [id] = await sessionIds(me.userId);
      // A plain write on another connection, as another instance's sign-out would be.
      const other = new pg.Client({ connectionString: t.database.url });
      await other.connect();
      try {
        await other.query('UPDATE web_sessions SET revoked_at = now() WHERE id = $1', [id]);
      } finally {
        await other.end();
      }
      await open.ended;
    } finally {
      open.close();
    }
  });

  it('ends when its session expires', async () => {
    const me = await t.signUp();
    const [id] = await sessionIds(me.userId);
    await t.database.db.pool.query(
      "UPDATE web_sessions SET expires_at = now() + interval '1 second' WHERE id = $1",
      [id],
    );
    const open = await stream(me.cookie);
    try {
      await open.ended;
    } finally {
      open.close();
    }
  });
});
