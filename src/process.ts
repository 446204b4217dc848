// Whether a process of this host is still running: the run lock, the report set's staging folders and
// the analyst copy's temporary files use it to tell a crash's leftovers from a run still under way.

/** True when `pid` runs (or exists but belongs to another user: EPERM). */
export function pidAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
