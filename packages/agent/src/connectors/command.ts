import { execFile } from 'node:child_process';

/** Last characters of a command's output kept in a failure reason. */
const TAIL = 600;

/**
 * Runs an argv (no shell, so nothing in a path is interpreted) and resolves with its output,
 * or rejects with the command's name and the tail of what it printed.
 */
export function runCommand(
  argv: readonly string[],
  timeoutMs = 60_000,
  env?: Record<string, string>,
): Promise<string> {
  const [file, ...args] = argv;
  if (!file) return Promise.reject(new Error('empty command'));
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { timeout: timeoutMs, maxBuffer: 1024 * 1024, ...(env ? { env: { ...process.env, ...env } } : {}) },
      (error, stdout, stderr) => {
        const output = `${stdout}${stderr}`.trim();
        if (error) {
          const tail = output.length > TAIL ? `…${output.slice(-TAIL)}` : output;
          const how =
            error.killed || error.signal
              ? `ended by ${error.signal ?? 'timeout'}`
              : typeof error.code === 'number'
                ? `exit code ${error.code}`
                : `could not run (${error.code ?? 'unknown error'})`;
          reject(new Error(`${argv.join(' ')} failed (${how})${tail ? `: ${tail}` : ''}`));
          return;
        }
        resolve(output);
      },
    );
  });
}
