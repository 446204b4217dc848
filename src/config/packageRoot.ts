// Where the installed package (or the checkout) lives: the folder that holds package.json and queries/.
// Here, low in the layers, because the configuration's default places, the SQL files beside their
// owners and the CLI's --version all start from it.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The directory holding package.json and queries/. Walks up from this module, so it works from
 * src/config under vitest and from dist/src/config when built. It also requires queries/ beside
 * package.json, because a build may emit a copy of package.json into dist/.
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'queries'))) {
      root = dir;
      return dir;
    }
    const up = dirname(dir);
    if (up === dir)
      throw new Error(
        `cannot find the package root (package.json with queries/) above ${fileURLToPath(import.meta.url)}`,
      );
    dir = up;
  }
}
