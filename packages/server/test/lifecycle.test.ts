import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';

const SECRET = 'lifecycle-test-secret-0123456789';

describe('certwright-server issues what it inventories', () => {
  const pki = makeTestPki(['server']);
  const ca = readFileSync(pki.ca);
  let server: ServerProcess;

  const call = (method: string, path: string, body?: unknown) =>
    httpsCall(server.port, ca, path, { method, body, headers: bearer(SECRET) });

  beforeAll(async () => {
    server = await startServerProcess({
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
    });
  });
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
  });

  it('moves a created certificate from Pending to Active through the scheduled issuance worker', async () => {
    const owner = await call('POST', '/api/v1/owners', { name: 'Alice', email: 'alice@example.com' });
    const team = await call('POST', '/api/v1/teams', { name: 'Platform' });
    const issuer = await call('POST', '/api/v1/issuers', { name: 'Test Local CA', type: 'Local' });
    const created = await call('POST', '/api/v1/certificates', {
      name: 'web',
      common_name: 'web.example.com',
      sans: ['web.example.com'],
      renewal_policy_id: 'rp-default',
      issuer_id: issuer.json.id,
      owner_id: owner.json.id,
      team_id: team.json.id,
      profile_id: 'prof-default',
    });
    expect(created.status).toBe(201);
    let status = created.json.status as string;
    for (let i = 0; i < 150 && status !== 'Active'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await call('GET', `/api/v1/certificates/${created.json.id}`)).json.status;
    }
    expect(status).toBe('Active');
    const key = await call('GET', `/api/v1/certificates/${created.json.id}/key-data`);
    expect(key.status).toBe(200);
    expect(key.json.serial_number).toMatch(/^[0-9a-f]+$/);
  });
});
