import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, unlink } from 'node:fs/promises';

/**
 * Files the server creates for itself (keys, the admin API key, bootstrap certificates), safe
 * when several processes start at once in one data directory.
 *
 * Content is written to a fresh temporary file opened create-exclusive (`wx`) with its final
 * mode, so no byte ever lands in a file others can read, and flushed; only then does the file
 * appear under its name, in one step. Readers therefore never see a partial file.
 */

/**
 * Returns the content of `path`, creating it from `make()` when it does not exist. Among
 * processes racing to create it, the first to link its file wins and every process returns the
 * winner's content.
 */
export async function readOrCreateFile(
  path: string,
  make: () => string | Promise<string>,
  mode = 0o600,
): Promise<{ content: string; created: boolean }> {
  const existing = await readWhole(path);
  if (existing !== undefined) return { content: existing, created: false };
  const content = await make();
  const temp = await writeTemp(path, content, mode);
  try {
    // link() fails with EEXIST instead of replacing: the first process to get here wins.
    await link(temp, path);
    return { content, created: true };
  } catch (error) {
    if (code(error) === 'EEXIST') {
      const winner = await readWhole(path);
      if (winner !== undefined) return { content: winner, created: false };
    }
    throw error;
  } finally {
    await unlink(temp).catch(() => {});
  }
}

/** Replaces `path` with `content` in one step (a reader sees the old file or the new one). */
export async function replaceFile(path: string, content: string, mode = 0o600): Promise<void> {
  const temp = await writeTemp(path, content, mode);
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
}

/** The file's text, or undefined when it does not exist. */
export async function readOptionalFile(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (code(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Like readOptionalFile, but an empty file is read again for up to two seconds: a process of
 * an older version may have created it and not written it yet.
 */
async function readWhole(path: string): Promise<string | undefined> {
  for (let attempt = 0; ; attempt++) {
    const text = await readOptionalFile(path);
    if (text === undefined || text.length > 0 || attempt >= 20) return text;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function writeTemp(path: string, content: string, mode: number): Promise<string> {
  const temp = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw error;
  }
  await handle.close();
  return temp;
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;
