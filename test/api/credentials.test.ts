import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readApiKey } from '../../src/api/credentials.js';
import { CredentialsError } from '../../src/api/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'usage-cred-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'key_9f8e7d6c5b4a-secret';

function keyFile(name: string, contents: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, contents);
  chmodSync(path, mode); // explicit: the umask must not decide what the test checks
  return path;
}

function attempt(env: NodeJS.ProcessEnv): { key?: string; error?: Error; warnings: string[] } {
  const warnings: string[] = [];
  try {
    return { key: readApiKey(env, { warn: (m) => warnings.push(m) }), warnings };
  } catch (error) {
    return { error: error as Error, warnings };
  }
}

describe('readApiKey', () => {
  it('reads USAGE_API_KEY', () => {
    expect(attempt({ USAGE_API_KEY: KEY })).toEqual({ key: KEY, warnings: [] });
  });

  it('reads a 0600 key file, trimmed, without a warning', () => {
    const path = keyFile('private.key', `  ${KEY}\n\n`, 0o600);
    expect(attempt({ USAGE_API_KEY_FILE: path })).toEqual({ key: KEY, warnings: [] });
  });

  it('warns about a 0644 key file, naming chmod 600 and the file, without the key', () => {
    const path = keyFile('shared.key', `${KEY}\n`, 0o644);
    const r = attempt({ USAGE_API_KEY_FILE: path });
    expect(r.key).toBe(KEY);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toContain(`chmod 600 ${path}`);
    expect(r.warnings[0]).not.toContain(KEY);
  });

  it('refuses an empty key file', () => {
    const path = keyFile('empty.key', ' \n', 0o600);
    const r = attempt({ USAGE_API_KEY_FILE: path });
    expect(r.error).toBeInstanceOf(CredentialsError);
    expect(r.error?.message).toMatch(/empty/);
    expect(r.error?.message).toContain(path);
  });

  it('refuses a missing key file, naming it', () => {
    const path = join(dir, 'nope.key');
    const r = attempt({ USAGE_API_KEY_FILE: path });
    expect(r.error).toBeInstanceOf(CredentialsError);
    expect(r.error?.message).toContain(path);
    expect(r.error?.message).toContain('ENOENT');
  });

  it('refuses when both are set, as ambiguous, without quoting the key', () => {
    const path = keyFile('both.key', KEY, 0o600);
    const r = attempt({ USAGE_API_KEY: KEY, USAGE_API_KEY_FILE: path });
    expect(r.error).toBeInstanceOf(CredentialsError);
    expect(r.error?.message).toContain('USAGE_API_KEY and USAGE_API_KEY_FILE');
    expect(r.error?.message).not.toContain(KEY);
  });

  it('refuses when neither is set, saying which variable to set', () => {
    for (const env of [{}, { USAGE_API_KEY: '' }]) {
      const r = attempt(env);
      expect(r.error).toBeInstanceOf(CredentialsError);
      expect(r.error?.message).toMatch(/set USAGE_API_KEY to the key, or USAGE_API_KEY_FILE to the path/);
    }
  });

  it('refuses a key with inner whitespace without quoting it', () => {
    const path = keyFile('two-lines.key', `${KEY}\nsecond-line-secret\n`, 0o600);
    const r = attempt({ USAGE_API_KEY_FILE: path });
    expect(r.error).toBeInstanceOf(CredentialsError);
    expect(r.error?.message).not.toContain(KEY);
    expect(r.error?.message).not.toContain('second-line-secret');
  });
});
