import { readFileSync } from 'node:fs';
import { processKillingCsrs } from '@certwright/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';

const SECRET = 'hostile-csr-test-secret-0123456789';

const pem = (der: Buffer): string =>
  `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;

describe('certwright-server survives CSRs whose keys used to abort the process', () => {
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

  it('answers a renewal with each such CSR with 400 key_rejected and keeps serving', async () => {
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
    const id = created.json.id as string;
    // Renewal parses the CSR; it needs an issued certificate, which the issuance worker makes.
    let status = created.json.status as string;
    for (let i = 0; i < 150 && status !== 'Active'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await call('GET', `/api/v1/certificates/${id}`)).json.status;
    }
    expect(status).toBe('Active');

    for (const csr of processKillingCsrs()) {
      const res = await call('POST', `/api/v1/certificates/${id}/renew`, { csr_pem: pem(csr.der) });
      expect({ csr: csr.name, status: res.status, reason: res.json?.reason }).toEqual({
        csr: csr.name,
        status: 400,
        reason: 'key_rejected',
      });
      // The same process answers the next request, and nothing changed.
      const after = await call('GET', `/api/v1/certificates/${id}`);
      expect(after.status).toBe(200);
      expect(after.json.status).toBe('Active');
      expect(server.child.exitCode).toBeNull();
      expect(server.child.signalCode).toBeNull();
    }
  }, 90_000);
});
