// The test setup's one install command, as printed to a user without root: `sudo` on each part, so
// pasting it once installs everything that is missing.
import { describe, expect, it } from 'vitest';
import { aptCommand } from './tools.js';

describe("the test setup's install command", () => {
  it('runs every part under sudo when not root, and none when root', () => {
    expect(aptCommand(['promtool', 'python3-venv'], true)).toBe(
      'sudo apt-get update && sudo apt-get install -y --no-install-recommends promtool python3-venv',
    );
    expect(aptCommand(['systemd'], false)).toBe('apt-get update && apt-get install -y --no-install-recommends systemd');
  });
});
