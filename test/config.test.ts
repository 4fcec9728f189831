import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('configuration from the environment', () => {
  it('has working defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ PORT: 3000, HOST: '127.0.0.1', DATA_DIR: '.data', WORKER: 'on', TOKEN_CACHE_SECONDS: 5 });
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'not a url'],
    ['LOG_LEVEL', 'loud'],
    ['WORKER', 'maybe'],
  ])('names the bad variable %s=%s in one line', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain(name);
    expect(message).not.toContain('\n');
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '' }).PORT).toBe(3000);
  });
});
