import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHandler } from '@certwright/api';
import { createServices, SecretBox, silentLogger, systemClock } from '@certwright/core';
import { createRequestListener } from '@certwright/server';
import { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { expect, it } from 'vitest';
import { createCustomAgent } from '../src/main.js';

const ADMIN = 'example-admin-key-0123456789';

it('deploys a server-issued certificate to the Traefik file provider and reports the outcome', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cw-example-'));
  const ssl = (...a: string[]) => execFileSync('openssl', a, { cwd: dir, stdio: 'pipe' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    'key.pem',
    '-out',
    'cert.pem',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  );
  const storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(SecretBox.generateKey()),
    clock: systemClock,
  });
  const services = createServices({ storage, clock: systemClock, logger: silentLogger });
  const handler = createHandler({ auth: { type: 'api-key', secret: ADMIN }, services, logger: silentLogger });
  const server = createServer(
    { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) },
    createRequestListener(handler),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // biome-ignore lint/suspicious/noExplicitAny: the test reads answers loosely.
  const call = async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await handler(
      new Request(url + path, {
        method,
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      }),
      { remoteAddress: '127.0.0.1' },
    );
    return res.json();
  };
  try {
    const agentRecord = await call('POST', '/api/v1/agents', { name: 'traefik-01', hostname: 'traefik-01' });
    const target = await call('POST', '/api/v1/targets', {
      agent_id: agentRecord.id,
      name: 'traefik',
      type: 'Traefik',
      config: { name: 'web' },
    });
    const [issuer, owner, team] = await Promise.all([
      call('POST', '/api/v1/issuers', { name: 'CA', type: 'Local' }),
      call('POST', '/api/v1/owners', { name: 'Web', email: 'web@example.com' }),
      call('POST', '/api/v1/teams', { name: 'Web' }),
    ]);
    const cert = await call('POST', '/api/v1/certificates', {
      name: 'web',
      common_name: 'web.example.com',
      renewal_policy_id: 'rp-default',
      issuer_id: issuer.id,
      owner_id: owner.id,
      team_id: team.id,
      target_ids: [target.id],
    });
    await call('POST', `/api/v1/certificates/${cert.id}/issue`, {});

    const traefikDir = mkdtempSync(join(tmpdir(), 'cw-traefik-'));
    writeFileSync(join(dir, 'agent.key'), agentRecord.api_key);
    const agent = createCustomAgent(
      {
        SVC_SERVER_URL: url,
        SVC_AGENT_ID: agentRecord.id,
        SVC_AGENT_API_KEY_FILE: join(dir, 'agent.key'),
        SVC_SERVER_CA_BUNDLE_PATH: join(dir, 'cert.pem'),
        TRAEFIK_DYNAMIC_DIR: traefikDir,
      },
      join(dir, 'state'),
    );
    await agent.tick();

    const issued = await call('GET', `/api/v1/certificates/${cert.id}`);
    const version = await storage.versions.getWithKey(issued.current_version_id);
    expect(readFileSync(join(traefikDir, 'web.crt'), 'utf8')).toContain(version!.cert_pem.trim());
    expect(statSync(join(traefikDir, 'web.key')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(traefikDir, 'certwright-web.yml'), 'utf8')).toContain(
      `certFile: ${traefikDir}/web.crt`,
    );
    const jobs = await call('GET', `/api/v1/jobs?certificate_id=${cert.id}&type=Deployment`);
    expect(jobs.data[0]).toMatchObject({
      status: 'Completed',
      result: { serial_number: version!.serial_number },
    });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await storage.close();
  }
});
