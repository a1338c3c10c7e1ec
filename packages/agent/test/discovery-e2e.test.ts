/**
 * Host discovery end to end: the agent scans its configured paths and reports what it found to
 * the real server handler (`POST /api/v1/agents/{id}/discoveries`, over HTTPS with the agent's
 * own key); the server records a scan and the certificates with their file paths.
 */
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CertwrightAgent, fingerprint256, registerAgent } from '../src/index.js';
import { ADMIN_KEY, startTestServer, type TestServer } from './support/server.js';
import { issueLeaf } from './support/servers.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
}, 180_000);
afterAll(async () => {
  await server?.close();
});

describe('host discovery against the real server', { timeout: 120_000 }, () => {
  it('reports certificate files found under the configured paths, not symlinks out of them', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'cw-agent-disc-'));
    const keyFile = join(stateDir, 'agent.key');
    const { id } = await registerAgent(
      { serverUrl: server.url, caBundlePem: server.caPem },
      ADMIN_KEY,
      { name: 'scan-01', hostname: 'scan-01.test' },
      keyFile,
    );
    const scanned = mkdtempSync(join(tmpdir(), 'cw-scan-root-'));
    const outside = mkdtempSync(join(tmpdir(), 'cw-scan-outside-'));
    mkdirSync(join(scanned, 'site'));
    const leaf = issueLeaf();
    const hidden = issueLeaf();
    writeFileSync(join(scanned, 'site', 'fullchain.pem'), leaf.certPem + leaf.chainPem);
    writeFileSync(join(scanned, 'site', 'key.pem'), leaf.keyPem);
    writeFileSync(join(outside, 'elsewhere.pem'), hidden.certPem);
    symlinkSync(outside, join(scanned, 'escape'));
    symlinkSync(join(outside, 'elsewhere.pem'), join(scanned, 'escape.pem'));

    const agent = new CertwrightAgent({
      connection: {
        serverUrl: server.url,
        agentId: id,
        apiKey: readFileSync(keyFile, 'utf8').trim(),
        caBundlePem: server.caPem,
      },
      connectors: [],
      heartbeatIntervalMs: 0,
      discovery: { paths: [scanned] },
    });
    await agent.tick();

    const scans = (await server.call('GET', '/api/v1/discovery/scans')).body.data;
    const scan = scans.find((s: { source: string }) => s.source === id);
    expect(scan).toMatchObject({ status: 'completed', certificates_found: 2, errors_count: 0 });

    const found = (await server.call('GET', '/api/v1/discovery/certificates?per_page=100')).body.data as {
      fingerprint_sha256: string;
      subject: string;
      sightings: { source: string; path: string | null }[];
    }[];
    const leafRecord = found.find((f) => f.fingerprint_sha256 === fingerprint256(leaf.certPem));
    expect(leafRecord?.sightings).toEqual([
      expect.objectContaining({ source: id, path: join(scanned, 'site', 'fullchain.pem') }),
    ]);
    expect(found.some((f) => f.fingerprint_sha256 === fingerprint256(leaf.chainPem))).toBe(true);
    // The certificate behind the symlinks was never read.
    expect(found.some((f) => f.fingerprint_sha256 === fingerprint256(hidden.certPem))).toBe(false);
  });

  it("refuses a report made with another agent's key", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'cw-agent-disc-'));
    const a = await registerAgent(
      { serverUrl: server.url, caBundlePem: server.caPem },
      ADMIN_KEY,
      { name: 'scan-a', hostname: 'a.test' },
      join(stateDir, 'a.key'),
    );
    const b = await registerAgent(
      { serverUrl: server.url, caBundlePem: server.caPem },
      ADMIN_KEY,
      { name: 'scan-b', hostname: 'b.test' },
      join(stateDir, 'b.key'),
    );
    const impostor = new CertwrightAgent({
      connection: {
        serverUrl: server.url,
        agentId: b.id,
        apiKey: readFileSync(join(stateDir, 'a.key'), 'utf8').trim(),
        caBundlePem: server.caPem,
      },
      connectors: [],
    });
    await expect(impostor.api.reportDiscoveries([])).rejects.toMatchObject({ status: 403 });
    expect(a.id).not.toBe(b.id);
  });
});
