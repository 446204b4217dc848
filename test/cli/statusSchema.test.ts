// `status` on a database this release has not upgraded yet (a read-only open does not migrate).
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { statusCommand } from '../../src/cli/status.js';
import { listMigrations } from '../../src/store/migrations.js';
import { openStore } from '../../src/store/store.js';
import { silentLogger } from '../../src/log.js';
import { useTempDbPath } from '../support/store.js';

describe('status on an older schema', () => {
  const dbPath = useTempDbPath();

  it('says which versions differ and that a collect upgrades the file; after the upgrade it answers', async () => {
    const release = listMigrations().at(-1)!.version;
    const older = await openStore({ path: dbPath(), migrations: listMigrations().slice(0, -1) });
    await older.close();
    const status = () => statusCommand({ db: dbPath(), env: {}, log: silentLogger });
    const refused = await status().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as Error).message).toBe(
      `${dbPath()} has schema version ${release - 1}, and this release reads version ${release}: ` +
        'run `usage-pipeline collect` once (it upgrades the database and publishes a new analyst copy), then `status` again.',
    );
    // What a collect does first: open the file read-write, which applies the pending migrations.
    await (await openStore({ path: dbPath() })).close();
    const answered = await status();
    expect(answered.schemaVersion).toBe(release);
    expect(answered.coverage).toEqual([]);
  });
});
