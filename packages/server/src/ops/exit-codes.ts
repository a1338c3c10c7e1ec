/**
 * Exit codes of `certwright-server backup` and `restore`, so a script can tell what to fix
 * (docs/operations/backup.md). 1 is anything else: the database unreachable, a file not writable.
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  targetNotEmpty: 3,
  wrongKey: 4,
  damaged: 5,
  otherSchema: 6,
  notVerified: 7,
} as const;
