import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createSoftHsmToken,
  type SoftHsmToken,
  softHsmModule,
} from '../../key-custody-pkcs11/src/softhsm.js';
import { bearer, httpsCall } from './support/https.js';
import { makeTestPki } from './support/openssl-pki.js';
import { runServer, startServerProcess } from './support/server-process.js';

const SECRET = 'key-custody-test-secret-0123456';
const skip = softHsmModule() ? undefined : 'SoftHSM2 is not installed (apt-get install softhsm2)';
if (skip && process.env.SVC_TEST_REQUIRE_SERVICES) throw new Error(skip);

let token: SoftHsmToken | undefined;
afterAll(() => token?.dispose());

describe.skipIf(skip)('the server with a PKCS#11 key custody (SoftHSM2)', () => {
  const pki = makeTestPki(['server']);
  const ca = readFileSync(pki.ca);
  const env = () => {
    token ??= createSoftHsmToken('server-ca');
    const pinFile = join(token.conf, '..', 'pin');
    writeFileSync(pinFile, `${token.pin}\n`, { mode: 0o600 });
    return {
      SVC_TLS_CERT_PATH: pki.issued.server!.cert,
      SVC_TLS_KEY_PATH: pki.issued.server!.key,
      SVC_AUTH_SECRET: SECRET,
      SOFTHSM2_CONF: token.conf,
      SVC_PKCS11_MODULE: token.module,
      SVC_PKCS11_TOKEN_LABEL: token.tokenLabel,
      SVC_PKCS11_PIN_FILE: pinFile,
    };
  };

  it('reports key_custody in /ready, runs a token-held Local CA, and never logs the PIN', async () => {
    const server = await startServerProcess(env());
    try {
      const ready = await httpsCall(server.port, ca, '/ready');
      expect(ready.status).toBe(200);
      expect(ready.json.checks.key_custody).toEqual({ ok: true });
      const issuer = await httpsCall(server.port, ca, '/api/v1/issuers', {
        method: 'POST',
        body: { name: 'Token CA', type: 'Local', config: { key_custody: 'pkcs11' } },
        headers: bearer(SECRET),
      });
      expect(issuer.status).toBe(201);
      const chain = await httpsCall(server.port, ca, `/api/v1/issuers/${issuer.json.id}/chain`, {
        headers: bearer(SECRET),
      });
      expect(chain.status).toBe(200);
      expect(chain.body).toMatch(/^-----BEGIN CERTIFICATE-----/);
      expect(server.output()).toContain('PKCS#11 key custody ready');
      expect(server.output()).not.toContain(token!.pin);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('refuses to start with a wrong PIN, naming the token and not the PIN', async () => {
    const bad = { ...env(), SVC_PKCS11_PIN_FILE: '', SVC_PKCS11_PIN: '8642097531' };
    const run = runServer({ ...bad, SVC_LISTEN_ADDR: '127.0.0.1', SVC_PORT: '0' });
    expect(await run.exited).not.toBe(0);
    expect(run.output()).toMatch(/PKCS#11 login to token 'server-ca' refused \(CKR_PIN_INCORRECT\)/);
    expect(run.output()).not.toContain('8642097531');
  });
});
