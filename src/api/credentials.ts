// The API key comes only from the environment (ARCHITECTURE.md: never a flag, never the config file), either
// directly or from a file, so that it stays out of shell history and process listings. No message here
// ever contains the key.
import { readFileSync, statSync } from 'node:fs';
import { CredentialsError } from './errors.js';

export const API_KEY_ENV = 'USAGE_API_KEY';
export const API_KEY_FILE_ENV = 'USAGE_API_KEY_FILE';

/** Group and other permission bits: a key file should be readable by its owner only. */
const SHARED_MODE_BITS = 0o077;

/**
 * Reads the API key from USAGE_API_KEY or from the file named by USAGE_API_KEY_FILE (its trimmed contents).
 * Throws CredentialsError when neither or both are set, or the file is unreadable or empty. Warns through
 * `opts.warn` when the key file is open to group or others.
 */
export function readApiKey(env: NodeJS.ProcessEnv, opts: { warn?: (msg: string) => void } = {}): string {
  // An empty variable (`export USAGE_API_KEY=`) counts as unset.
  const direct = env[API_KEY_ENV] || undefined;
  const file = env[API_KEY_FILE_ENV] || undefined;

  if (direct !== undefined && file !== undefined) {
    throw new CredentialsError(
      `Both ${API_KEY_ENV} and ${API_KEY_FILE_ENV} are set, so it is unclear which key to use: unset one of them.`,
    );
  }
  if (direct === undefined && file === undefined) {
    throw new CredentialsError(
      `No API key: set ${API_KEY_ENV} to the key, or ${API_KEY_FILE_ENV} to the path of a file that contains it.`,
    );
  }
  if (direct !== undefined) return checkKey(direct.trim(), API_KEY_ENV);

  const path = file as string;
  let mode: number;
  let contents: string;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Error('not a regular file');
    mode = st.mode;
    contents = readFileSync(path, 'utf8');
  } catch (err) {
    const why = (err as { code?: string }).code ?? (err as Error).message;
    throw new CredentialsError(`${API_KEY_FILE_ENV} names ${path}, which cannot be read (${why}).`);
  }
  // Permission bits mean nothing on Windows.
  if (process.platform !== 'win32' && (mode & SHARED_MODE_BITS) !== 0) {
    opts.warn?.(
      `The API key file ${path} is accessible to other users (mode ${(mode & 0o777).toString(8)}); ` +
        `restrict it with: chmod 600 ${path}`,
    );
  }
  return checkKey(contents.trim(), `the file ${path} (${API_KEY_FILE_ENV})`);
}

function checkKey(key: string, source: string): string {
  if (key === '') throw new CredentialsError(`The API key in ${source} is empty.`);
  // A key goes into a header verbatim; whitespace or control characters inside it mean a wrong file or paste.
  // eslint-disable-next-line no-control-regex
  if (/[\s\x00-\x1f\x7f]/.test(key)) {
    throw new CredentialsError(
      `The API key in ${source} contains whitespace or control characters; it should be a single token.`,
    );
  }
  return key;
}
