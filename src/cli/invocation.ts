// How the user runs this CLI from where they are, so that printed hints run as printed.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../config/packageRoot.js';

/** `usage-pipeline` when installed (on the PATH), `npx usage-pipeline` at a checkout's root, else `node <path>`. */
export function cliInvocation(cwd: string = process.cwd()): string {
  const root = packageRoot();
  if (!existsSync(join(root, '.git'))) return 'usage-pipeline';
  if (resolve(cwd) === root) return 'npx usage-pipeline';
  return `node ${join(root, 'dist', 'src', 'cli', 'main.js')}`;
}

/** Quotes an argument for a POSIX shell when it needs it. */
export function shellArg(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}
