import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a real binary (openssl, keytool); never throws on a non-zero exit so tests can assert on it. */
export async function tool(bin: string, args: string[], options: { cwd?: string } = {}): Promise<ToolResult> {
  try {
    const { stdout, stderr } = await run(bin, args, { cwd: options.cwd, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof e.code === 'number' ? e.code : 1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? String(err),
    };
  }
}

export const openssl = (args: string[], options: { cwd?: string } = {}): Promise<ToolResult> =>
  tool('openssl', args, options);

/** A temporary directory for one test file, with a helper to write files into it. */
export async function workdir(): Promise<{
  dir: string;
  file: (name: string, data: string | Uint8Array) => Promise<string>;
  cleanup: () => Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'certwright-pki-'));
  return {
    dir,
    file: async (name, data) => {
      const path = join(dir, name);
      await writeFile(path, data);
      return path;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
