import { describe, expect, it } from 'vitest';
import { newerBuild, noteServedBuild, OWN_BUILD, onNewerBuild } from '../../web/src/build.js';

/**
 * The page's side of an upgrade (web/src/build.ts): a build the service names that is not
 * the page's own is announced once; its own, none at all, or a page whose build is
 * unknown (these modules are not served from /assets/<build>/ here) announce nothing.
 */
describe('noteServedBuild', () => {
  it('announces the first build unlike the page’s own, once, and remembers it', () => {
    expect(OWN_BUILD).toBeNull();
    const heard: string[] = [];
    const stop = onNewerBuild((b) => heard.push(b));
    noteServedBuild('aaaaaaaaaaaa');
    noteServedBuild(null, '111111111111');
    noteServedBuild('111111111111', '111111111111');
    expect(heard).toEqual([]);
    expect(newerBuild()).toBeNull();

    noteServedBuild('222222222222', '111111111111');
    noteServedBuild('222222222222', '111111111111');
    expect(heard).toEqual(['222222222222']);
    expect(newerBuild()).toBe('222222222222');
    // Yet another upgrade while the notice shows: still one notice, naming the latest.
    noteServedBuild('333333333333', '111111111111');
    expect(heard).toEqual(['222222222222', '333333333333']);
    stop();
    noteServedBuild('444444444444', '111111111111');
    expect(heard).toHaveLength(2);
  });
});
