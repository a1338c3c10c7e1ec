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
 * CPU milliseconds (user + system) used so far by the threads of a process, summed by thread
 * name (/proc/<pid>/task/<tid>/comm), the main thread apart as `main`: Node names its V8
 * helpers (compiler, GC) and libuv's pool after the process, so for Node `main` against the
 * rest is JavaScript against the optimizing compiler, GC helpers and the thread pool.
 */
export function threadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name =
        tid === String(pid) ? 'main' : readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
      byName.set(name, (byName.get(name) ?? 0) + ms);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return byName;
}

/**
 * Of {@link processCpuMs}, the part of threads other than the main one (V8's compiler and
 * garbage-collector helpers, libuv's pool): how much of a server's CPU is background work rather
 * than its event loop. Threads that have exited are not counted.
 */
export function backgroundThreadsCpuMs(pid: number): number {
  let ms = 0;
  for (const [name, used] of threadCpuMs(pid)) if (name !== 'main') ms += used;
  return ms;
}
