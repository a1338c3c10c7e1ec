/**
 * A deployment SIGKILLed after writing its files and before validation: nginx keeps serving
 * the previous certificate, and the next deployment first puts the previous files back from
 * its journal — so when that one fails too, what remains is the certificate from before both.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConnectorTarget,
  fingerprint256,
  JOURNAL_SUFFIX,
  nginxConnector,
  servedCertificate,
  verifyEndpoint,
} from '../src/index.js';
import { startNginx, type TestNginx } from './support/nginx.js';
import { issueLeaf } from './support/servers.js';

const CHILD = fileURLToPath(new URL('./support/deploy-child.ts', import.meta.url));
let nginx: TestNginx;
beforeAll(async () => {
  nginx = await startNginx();
});
afterAll(() => nginx?.stop());

const material = (p: ReturnType<typeof issueLeaf>) => ({
  versionId: 'v',
  serialNumber: '',
  certPem: p.certPem,
  chainPem: p.chainPem,
  privateKeyPem: p.keyPem,
});

describe('a deployment killed half-way', { timeout: 120_000 }, () => {
  it('leaves nginx serving the old certificate, and the next deployment restores the old files first', async () => {
    const original = readFileSync(nginx.certPath, 'utf8');
    const target: ConnectorTarget = {
      id: 'tg-1',
      name: 'edge',
      type: 'NGINX',
      config: { cert_path: nginx.certPath, key_path: nginx.keyPath, verify_port: nginx.port },
    };
    const validate = [...nginx.argv, '-t', '-q'];
    const reload = [...nginx.argv, '-s', 'reload'];
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', CHILD], {
      detached: true,
      stdio: 'ignore',
      env: {
        ...process.env,
        DEPLOY_ARGS: JSON.stringify({
          allowedDirs: [nginx.tlsDir],
          // Validation that never ends: the process is killed while it runs.
          validate: ['sleep', '60'],
          reload,
          target,
          material: material(issueLeaf()),
        }),
      },
    });
    const exited = new Promise((r) => child.once('exit', r));
    for (let i = 0; i < 600; i++) {
      if (existsSync(nginx.certPath + JOURNAL_SUFFIX) && readFileSync(nginx.certPath, 'utf8') !== original)
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(readFileSync(nginx.certPath, 'utf8')).not.toBe(original);
    process.kill(-child.pid!, 'SIGKILL'); // the deploying process and its `sleep`
    await exited;
    // Never reloaded: nginx serves what it served before.
    const served = () => servedCertificate({ host: '127.0.0.1', port: nginx.port });
    expect((await served()).fingerprint256).toBe(fingerprint256(original));

    const connector = nginxConnector({
      allowedDirs: [nginx.tlsDir],
      validateCommand: validate,
      reloadCommand: reload,
    });
    nginx.breakConfig();
    try {
      await expect(connector.deploy(target, material(issueLeaf()))).rejects.toThrow('validation failed');
    } finally {
      nginx.repairConfig();
    }
    expect(readFileSync(nginx.certPath, 'utf8')).toBe(original);
    expect(existsSync(nginx.certPath + JOURNAL_SUFFIX)).toBe(false);
    expect((await served()).fingerprint256).toBe(fingerprint256(original));

    const next = issueLeaf();
    await connector.deploy(target, material(next));
    // nginx's old workers may take a connection or two after the reload: the same consistent
    // check the connector uses, rather than one handshake.
    const check = await verifyEndpoint({ host: '127.0.0.1', port: nginx.port }, fingerprint256(next.certPem));
    expect(check.ok, check.detail).toBe(true);
  });
});
