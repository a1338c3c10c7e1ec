import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every test run gets one private temporary directory, removed when the run ends.
 *
 * Tests and the servers, databases and clients they start make their scratch directories with
 * `os.tmpdir()`; pointing TMPDIR (which `os.tmpdir()` and child processes read) at a directory of
 * this run's own means a run that fails, times out or forgets a cleanup leaves nothing behind in
 * the machine's /tmp, and two runs side by side never see each other's files.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'cw-test-run-'));
  // Traversable but not listable: daemons the tests start under their own users (Postfix,
  // Dovecot) must reach the directories the tests make for them inside.
  chmodSync(dir, 0o711);
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
}
