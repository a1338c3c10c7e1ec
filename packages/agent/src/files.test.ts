import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BACKUP_SUFFIX,
  backupFile,
  checkAllowedPath,
  removeStaleTemporaries,
  restoreBackup,
  writeFileAtomic,
} from './files.js';

const dir = () => mkdtempSync(join(tmpdir(), 'cw-agent-files-'));

describe('writeFileAtomic', () => {
  it('replaces the file with the given mode and leaves no temporary file', () => {
    const d = dir();
    const path = join(d, 'key.pem');
    writeFileSync(path, 'old', { mode: 0o644 });
    writeFileAtomic(path, 'new', { mode: 0o600 });
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(d)).toEqual(['key.pem']);
  });

  it('leaves the old file untouched and no temporary file when a step fails', () => {
    const d = dir();
    const path = join(d, 'cert.pem');
    writeFileSync(path, 'old');
    // The rename onto a directory fails after the temporary file was written and synced.
    mkdirSync(join(d, 'sub'));
    expect(() => writeFileAtomic(join(d, 'sub'), 'new', { mode: 0o644 })).toThrow();
    expect(readFileSync(path, 'utf8')).toBe('old');
    expect(readdirSync(d).sort()).toEqual(['cert.pem', 'sub']);
  });

  it('refuses a directory that does not exist without creating anything', () => {
    const d = dir();
    expect(() => writeFileAtomic(join(d, 'missing', 'x.pem'), 'new', { mode: 0o644 })).toThrow();
    expect(readdirSync(d)).toEqual([]);
  });
});

describe('backups', () => {
  it('restores the previous content, or removes a file that had none', () => {
    const d = dir();
    const path = join(d, 'a.pem');
    writeFileSync(path, 'v1');
    expect(backupFile(path)).toBe(true);
    writeFileSync(path, 'v2');
    restoreBackup(path, true);
    expect(readFileSync(path, 'utf8')).toBe('v1');
    expect(readFileSync(path + BACKUP_SUFFIX, 'utf8')).toBe('v1');
    const fresh = join(d, 'b.pem');
    expect(backupFile(fresh)).toBe(false);
    writeFileSync(fresh, 'x');
    restoreBackup(fresh, false);
    expect(readdirSync(d).sort()).toEqual(['a.pem', `a.pem${BACKUP_SUFFIX}`]);
  });
});

describe('checkAllowedPath', () => {
  it('accepts a path inside an allowed directory', () => {
    const d = dir();
    expect(checkAllowedPath(join(d, 'x.pem'), [d], 'cert_path')).toMatch(/x\.pem$/);
  });

  it('refuses relative paths, paths outside, traversal and a symlinked directory that leads out', () => {
    const allowed = dir();
    const outside = dir();
    symlinkSync(outside, join(allowed, 'link'));
    const cases = [
      ['x.pem', 'must be an absolute path'],
      [join(outside, 'x.pem'), 'outside the allowed directories'],
      [join(allowed, '..', 'x.pem'), 'outside the allowed directories'],
      [join(allowed, 'link', 'x.pem'), 'outside the allowed directories'],
      [allowed, 'outside the allowed directories'],
    ];
    for (const [path, message] of cases) {
      expect(() => checkAllowedPath(path!, [allowed], 'cert_path'), path).toThrow(message!);
    }
    expect(() => checkAllowedPath(join(allowed, 'x.pem'), [], 'key_path')).toThrow('no allowed directories');
  });
});

describe('removeStaleTemporaries', () => {
  it('removes what an interrupted write left next to the file, and nothing else', () => {
    const d = dir();
    const path = join(d, 'site.pem');
    writeFileSync(path, 'current');
    writeFileSync(join(d, '.site.pem.0123456789ab.tmp'), 'half');
    writeFileSync(join(d, '.other.pem.0123456789ab.tmp'), 'not ours');
    writeFileSync(join(d, '.site.pem.notes'), 'keep');
    expect(removeStaleTemporaries(path)).toBe(1);
    expect(readdirSync(d).sort()).toEqual(['.other.pem.0123456789ab.tmp', '.site.pem.notes', 'site.pem']);
    expect(readFileSync(path, 'utf8')).toBe('current');
  });
});
