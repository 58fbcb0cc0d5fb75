import { describe, expect, it } from 'vitest';
import { BrokerAccess, type BrokerClient } from './broker-access.js';
import { ReaderDirectory } from './directory.js';
import { hashMqttPassword } from './mqtt-credentials.js';
import type { ReaderTopic } from './readers-repository.js';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const password = 'correct horse battery staple';
const reader: ReaderTopic = {
  id: 7,
  orgId: 1,
  family: 'generic-json',
  topic: 'site/gate',
  mqttPasswordHash: hashMqttPassword(password),
};
const client = (): BrokerClient => ({ id: 'reader-7', closed: false, close: () => {} });

/**
 * A login the broker gave up on (its timeout aborted the signal and closed the connection)
 * must end, and never register the client, whenever the readers arrive.
 */
describe('a login given up on', () => {
  it('stops waiting for the readers to be loaded', async () => {
    const access = new BrokerAccess();
    const login = new AbortController();
    const pending = access.authenticate(client(), 'reader-7', Buffer.from(password), login.signal);
    login.abort(new Error('given up'));
    await expect(pending).rejects.toThrow('given up');
  });

  it('is not registered when the reload it waited for ends after it was given up', async () => {
    // Loaded without reader 7; the reload its login asks for answers only when released.
    let release: (rows: ReaderTopic[]) => void = () => {};
    let asked: () => void = () => {};
    const reloadAsked = new Promise<void>((resolve) => (asked = resolve));
    let loads = 0;
    const directory = new ReaderDirectory({
      source: () => {
        loads += 1;
        if (loads === 1) return Promise.resolve([]);
        if (loads > 2) return Promise.resolve([reader]);
        asked();
        return new Promise<ReaderTopic[]>((resolve) => (release = resolve));
      },
      logger: quiet,
    });
    await directory.start();
    const access = new BrokerAccess();
    access.attach(directory, quiet);
    const waiting = client();
    const login = new AbortController();
    const pending = access.authenticate(waiting, 'reader-7', Buffer.from(password), login.signal);
    await reloadAsked;
    login.abort(new Error('given up'));
    release([reader]);
    await expect(pending).rejects.toThrow('given up');
    expect(access.readerOf(waiting)).toBeUndefined();
    // Not given up on, the same login is taken.
    const taken = client();
    await access.authenticate(taken, 'reader-7', Buffer.from(password), new AbortController().signal);
    expect(access.readerOf(taken)).toBe(7);
    await directory.stop();
  });
});
