import { describe, expect, it } from 'vitest';
import { hideUserInfo } from './url-user-info.js';

describe('hideUserInfo', () => {
  it.each([
    ['mqtt://svcuser:MqttUrlPassw0rd-4242@127.0.0.1:18949', 'mqtt://(hidden)@127.0.0.1:18949'],
    ['redis//:RedisPassw0rd-31@127.0.0.1:6379/7', 'redis//(hidden)@127.0.0.1:6379/7'],
    ['postgres://u:p@ss:w/rd@db.example.com/tagtrail', 'postgres://(hidden)@db.example.com/tagtrail'],
    ['user:secret@host', '(hidden)@host'],
    ['mqtt://127.0.0.1:1883', 'mqtt://127.0.0.1:1883'],
    ['postgres://db.example.com/tagtrail', 'postgres://db.example.com/tagtrail'],
    [
      'postgres://db.example.com/tagtrail?user=u&password=Passw0rd-7&sslmode=require',
      'postgres://db.example.com/tagtrail?user=u&password=(hidden)&sslmode=require',
    ],
    [
      'postgres:///tagtrail?host=/run&PASSWORD=x&sslpassword=y',
      'postgres:///tagtrail?host=/run&PASSWORD=(hidden)&sslpassword=(hidden)',
    ],
    ['redis://cache.example.com:6379?token=t0k3n#x', 'redis://cache.example.com:6379?token=(hidden)#x'],
    ['postgres://u:p@db/tagtrail?password=p@ss', 'postgres://(hidden)@db/tagtrail?password=(hidden)'],
  ])('%s shows as %s', (given, shown) => {
    expect(hideUserInfo(given)).toBe(shown);
  });
});
