import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bearer, httpsCall } from './support/https.js';

const QUICKSTART = fileURLToPath(new URL('../src/quickstart.ts', import.meta.url));

function startQuickstart(dataDir: string) {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', QUICKSTART], {
    env: { PATH: process.env.PATH ?? '', SVC_DATA_DIR: dataDir, SVC_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  const port = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start:\n${output}`)), 30_000);
    child.stdout.on('data', () => {
      const match = /"url":"https:\/\/127\.0\.0\.1:(\d+)".*"msg":"certwright-server ready"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', () => reject(new Error(`exited:\n${output}`)));
  });
  return { child, port, output: () => output };
}

const get = async (port: number, ca: Buffer, path: string, key?: string) => {
  const reply = await httpsCall(port, ca, path, { headers: key ? bearer(key) : {} });
  return { status: reply.status, body: reply.body };
};

describe('quick start', () => {
  it('bootstraps a CA, a localhost certificate and an admin key, then serves TLS with them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cw-quick-'));
    const first = startQuickstart(dataDir);
    const port = await first.port;
    const ca = readFileSync(join(dataDir, 'bootstrap', 'ca.pem'));
    const key = readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim();
    expect(statSync(join(dataDir, 'admin-api-key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'bootstrap', 'server-key.pem')).mode & 0o777).toBe(0o600);
    expect(first.output()).toContain('curl --cacert ./');
    expect(first.output()).not.toContain(key);

    expect(await get(port, ca, '/health')).toEqual({ status: 200, body: '{"status":"ok"}' });
    expect((await get(port, ca, '/metrics')).status).toBe(401);
    expect((await get(port, ca, '/metrics', key)).status).toBe(200);
    first.child.kill('SIGTERM');
    await new Promise((r) => first.child.once('exit', r));

    // A second run reuses the same CA and key instead of minting new ones.
    const second = startQuickstart(dataDir);
    const port2 = await second.port;
    expect(readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim()).toBe(key);
    expect((await get(port2, ca, '/metrics', key)).status).toBe(200);
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));
  });
});
