/** A one-line progress report on stderr, drawn only when both stdout and stderr are terminals. */
export interface Progress {
  update(done: number, total?: number, label?: string): void;
  done(): void;
}

export function createProgress(
  stderr: { write(text: string): unknown; isTTY?: boolean },
  stdoutIsTty: boolean,
  title: string,
): Progress {
  if (!stdoutIsTty || !stderr.isTTY) return { update() {}, done() {} };
  let drawn = false;
  return {
    update(done, total, label) {
      const width = 30;
      const bar =
        total && total > 0
          ? `[${'#'.repeat(Math.round((Math.min(done, total) / total) * width)).padEnd(width, '.')}] ${done}/${total}`
          : `${done}`;
      stderr.write(`\r\x1b[2K${title} ${bar}${label ? ` ${label}` : ''}`);
      drawn = true;
    },
    done() {
      if (drawn) stderr.write('\r\x1b[2K');
    },
  };
}
