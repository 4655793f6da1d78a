// Whether a process id still names a running process: for lock files left by a process that
// may have died (the PGlite data-folder lock, the test build lock). Signal 0 checks without
// signalling; EPERM means it exists but belongs to someone else.
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
