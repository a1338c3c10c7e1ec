import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bearer, httpsCall } from './support/https.js';
import { QUICKSTART, startServerProcess } from './support/server-process.js';

const startQuickstart = (dataDir: string) => startServerProcess({ SVC_DATA_DIR: dataDir }, QUICKSTART);

const get = async (port: number, ca: Buffer, path: string, key?: string) => {
  const reply = await httpsCall(port, ca, path, { headers: key ? bearer(key) : {} });
  return { status: reply.status, body: reply.body };
};

describe('quick start', () => {
  it('bootstraps a CA, a localhost certificate and an admin key, then serves TLS with them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cw-quick-'));
    const first = await startQuickstart(dataDir);
    const port = first.port;
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
    await first.exited;

    // A second run reuses the same CA and key instead of minting new ones.
    const second = await startQuickstart(dataDir);
    const port2 = second.port;
    expect(readFileSync(join(dataDir, 'admin-api-key'), 'utf8').trim()).toBe(key);
    expect((await get(port2, ca, '/metrics', key)).status).toBe(200);
    second.child.kill('SIGTERM');
    await second.exited;
  });
});
