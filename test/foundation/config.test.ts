import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected loadConfig to refuse');
}

describe('configuration errors', () => {
  it('names the variable, the value given and the allowed values of an enum setting', () => {
    const message = configError({ TAGTRAIL_SIGNUP: 'yes' });
    expect(message).toContain('TAGTRAIL_SIGNUP="yes": must be one of first-user-only, open, closed');
    expect(message).not.toContain('Expected union value');
  });

  it.each([
    ['TAGTRAIL_ENV', 'prod', 'production, preview'],
    ['LOG_LEVEL', 'verbose', 'fatal, error, warn, info, debug, trace, silent'],
  ])('lists the allowed values of %s', (name, value, allowed) => {
    expect(configError({ [name]: value })).toContain(`${name}="${value}": must be one of ${allowed}`);
  });

  it('reports each invalid variable once, with its value', () => {
    const message = configError({ TAGTRAIL_SIGNUP: 'yes', PORT: 'eighty', LOG_LEVEL: 'loud' });
    const lines = message.split('\n').slice(1);
    expect(lines).toHaveLength(3);
    expect(message).toContain('PORT="eighty"');
    expect(message).toContain('LOG_LEVEL="loud": must be one of');
  });

  it('accepts every allowed enum value', () => {
    for (const value of ['first-user-only', 'open', 'closed']) {
      expect(loadConfig({ TAGTRAIL_SIGNUP: value }).TAGTRAIL_SIGNUP).toBe(value);
    }
  });
});
