/**
 * Crash safety of issuance: a process killed between signing and storing (or in the middle of
 * the storing transaction) leaves either no version or a complete one — never a half-written
 * certificate. A child process runs the real pipeline on a PGlite data directory and SIGKILLs
 * itself at the chosen point; the test then reopens the directory and inspects it.
 */
import { spawn } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SecretBox, systemClock } from '@certwright/core';
import { createPgliteStorage } from '@certwright/storage-pg';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const FIXTURE = resolve(import.meta.dirname, 'fixtures/crash-issue.ts');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function runFixture(dataDir: string, crashAt: string, key: Buffer) {
  return new Promise<{ signal: NodeJS.Signals | null; code: number | null; lines: any[]; stderr: string }>(
    (done) => {
      const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', FIXTURE, dataDir], {
        cwd: ROOT,
        env: { ...process.env, CRASH_AT: crashAt, CRASH_SECRET_KEY: key.toString('hex') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let stderr = '';
      child.stdout.on('data', (c) => {
        out += c;
      });
      child.stderr.on('data', (c) => {
        stderr += c;
      });
      child.on('exit', (code, signal) =>
        done({
          code,
          signal,
          stderr,
          lines: out
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l)),
        }),
      );
    },
  );
}

async function inspect(dataDir: string, key: Buffer, certificateId: string) {
  const storage = await createPgliteStorage(
    { dataDir },
    { secretBox: new SecretBox(key), clock: systemClock },
  );
  try {
    const certificate = await storage.certificates.require(certificateId);
    const versions = await storage.versions.listForCertificate(certificateId);
    return { certificate, versions: versions.items };
  } finally {
    await storage.close();
  }
}

describe('issuance crash safety', { timeout: 120_000 }, () => {
  it.each(['after-sign', 'before-commit'])('a SIGKILL at %s leaves no version', async (point) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cw-crash-'));
    dirs.push(dataDir);
    const key = randomBytes(32);
    const result = await runFixture(dataDir, point, key);
    expect(result.signal, result.stderr).toBe('SIGKILL');
    const id = result.lines[0]?.certificate_id as string;
    expect(id).toMatch(/.+/);
    const state = await inspect(dataDir, key, id);
    expect(state.versions).toEqual([]);
    expect(state.certificate).toMatchObject({
      status: 'Pending',
      current_version_id: null,
      expires_at: null,
    });
  });

  it('without a crash the same run leaves one complete version', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cw-crash-'));
    dirs.push(dataDir);
    const key = randomBytes(32);
    const result = await runFixture(dataDir, 'none', key);
    expect(result.code, result.stderr).toBe(0);
    const id = result.lines[0]?.certificate_id as string;
    const state = await inspect(dataDir, key, id);
    expect(state.versions).toHaveLength(1);
    const [version] = state.versions;
    expect(state.certificate).toMatchObject({ status: 'Active', current_version_id: version!.id });
    const x509 = new X509Certificate(version!.cert_pem);
    expect(x509.serialNumber.toLowerCase().replace(/^0+/, '')).toBe(version!.serial_number);
    expect(version!.chain_pem).toContain('BEGIN CERTIFICATE');
  });
});
