import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: the unit of utime/stime in /proc/<pid>/stat (100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/**
 * CPU milliseconds (user + system, every thread) a process has used so far, from
 * /proc/<pid>/stat: what a server costs, read from outside it. Resolution 10 ms.
 */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count after its end.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 (utime, stime) are the 12th and 13th after the command name.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/**
 * Of {@link processCpuMs}, the part of threads other than the main one (V8's compiler and
 * garbage-collector helpers, libuv's pool), from /proc/<pid>/task/<tid>/stat: how much of a
 * server's CPU is background work rather than its event loop. Threads that have exited are
 * not counted.
 */
export function backgroundThreadsCpuMs(pid: number): number {
  let ticks = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    if (tid === String(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}
