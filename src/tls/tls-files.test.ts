import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from './tls-files.js';

describe('isLoopbackHost', () => {
  it('is this machine only for localhost, 127/8 and ::1', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
  });

  it('is the network for every other address, the wildcards first of all', () => {
    for (const host of [
      '0.0.0.0',
      '::',
      '[::]',
      '10.0.0.5',
      '192.168.1.10',
      'tagtrail.site.example',
      '128.0.0.1',
      '127.0.0.1.example',
    ]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
