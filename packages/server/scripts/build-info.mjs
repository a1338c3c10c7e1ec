// Records what was built into dist/build-info.json for GET /api/v1/version.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const git = (...args) => {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
};
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const info = {
  version,
  commit: git('rev-parse', '--short=12', 'HEAD') || 'unknown',
  modified: git('status', '--porcelain', '--untracked-files=no') !== '',
  build_time: new Date().toISOString(),
};
writeFileSync(new URL('../dist/build-info.json', import.meta.url), `${JSON.stringify(info, null, 2)}\n`);
