import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  buildInternalApp,
  freshAddress,
  type InternalTestApp,
  uniqueEmail,
} from './helpers.js';

interface Received {
  from: string;
  to: string[];
  body: string;
}

/**
 * Invitation mail through a local SMTP server (the smtp-server package on a random loopback
 * port, no TLS): what arrives, and an invitation that still works when the server is gone.
 */
describe('invitations mailed by SMTP (TAGTRAIL_SMTP_URL)', () => {
  let smtp: SMTPServer;
  let port: number;
  const inbox: Received[] = [];
  let t: InternalTestApp;
  let admin: Browser;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          inbox.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            body: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    smtp.listen(0, '127.0.0.1');
    await once(smtp.server, 'listening');
    port = (smtp.server.address() as AddressInfo).port;
    t = await buildInternalApp({
      smtpUrl: `smtp://127.0.0.1:${port}`,
      publicUrl: 'https://tagtrail.depot.test',
    });
    admin = await t.signUp({ organization: 'Depot' });
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it('mails the link to the invited address, from the configured sender; resending mails the new one', async () => {
    const email = uniqueEmail('bea');
    const res = await admin.post('/internal/invitations', { email, role: 'editor' });
    expect(res.statusCode, res.body).toBe(201);
    const sent = res.json();
    expect(sent).toMatchObject({ emailed: true });
    expect(sent.email_error).toBeUndefined();
    const mail = inbox.find((m) => m.to.includes(email));
    expect(mail).toBeDefined();
    expect(mail!.from).toBe('no-reply@depot.test');
    // The link may be folded by quoted-printable; undo soft line breaks before looking.
    const body = mail!.body.replace(/=\r?\n/g, '');
    expect(body).toContain(`Subject: You are invited to Depot on tagtrail`);
    expect(body).toContain(sent.token);
    expect(body).toContain(`invites you to Depot on tagtrail as an editor`);

    const resent = (await admin.post(`/internal/invitations/${sent.data.id}/resend`)).json();
    expect(resent.emailed).toBe(true);
    const mails = inbox.filter((m) => m.to.includes(email));
    expect(mails).toHaveLength(2);
    expect(mails[1]!.body.replace(/=\r?\n/g, '')).toContain(resent.token);

    // The mailed link works like the shown one.
    const accepted = await t.app.inject({
      method: 'POST',
      url: '/internal/invitations/accept',
      remoteAddress: freshAddress(),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ token: resent.token, password: 'mailed person pass' }),
    });
    expect(accepted.statusCode, accepted.body).toBe(201);
  });

  it('mails and shows a link at TAGTRAIL_PUBLIC_URL, whatever Host header the request carried', async () => {
    const email = uniqueEmail('dee');
    const res = await admin.request({
      method: 'POST',
      url: '/internal/invitations',
      payload: JSON.stringify({ email, role: 'viewer' }),
      headers: { 'content-type': 'application/json', host: 'attacker.example' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const sent = res.json();
    const link = `https://tagtrail.depot.test/invitation#${sent.token}`;
    expect(sent).toMatchObject({ emailed: true, url: link });
    const body = inbox.find((m) => m.to.includes(email))!.body.replace(/=\r?\n/g, '');
    expect(body).toContain(link);
    expect(body).not.toContain('attacker.example');
  });

  it('when the mail cannot go, the invitation stands and the admin is told why, with the link', async () => {
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    const res = await admin.post('/internal/invitations', { email: uniqueEmail('cy'), role: 'viewer' });
    expect(res.statusCode, res.body).toBe(201);
    const sent = res.json();
    expect(sent.emailed).toBe(false);
    expect(sent.email_error).toEqual(expect.stringMatching(/ECONNREFUSED|connect/i));
    expect(sent.url).toContain(sent.token);
    const listed = (await admin.get('/internal/invitations')).json().data;
    expect(listed.map((i: { id: number }) => i.id)).toContain(sent.data.id);
  });
});
