/**
 * The load generator of `pnpm bench acme` (bench/support/acme-client.ts) completes issuances
 * against certwright over TLS 1.3: the benchmark's figures count real issuances, each a
 * certificate for the ordered name, over one kept-alive connection.
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { Agent } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcmeBenchClient } from '../../bench/support/acme-client.js';
import { type BenchListener, listenTls } from '../../bench/support/tls-listener.js';
import { createHandler } from '../../packages/api/src/index.js';
import {
  createServices,
  SecretBox,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '../../packages/core/src/index.js';
import { createCertificationRequest, generateKeyPair } from '../../packages/core/src/pki/index.js';
import { createPgliteStorage } from '../../packages/storage-pg/src/index.js';
import { createMigratedPgliteStorage } from '../../packages/storage-pg/src/testing.js';
import type { SqlStorage } from '../../packages/storage-sql/src/index.js';

let storage: SqlStorage;
let listener: BenchListener;
let agent: Agent;

beforeAll(async () => {
  storage = await createMigratedPgliteStorage({ secretBox: new SecretBox(randomBytes(32)) });
  const services = createServices({ storage, clock: systemClock, logger: silentLogger });
  await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
    acme: { enabled: true, auth_mode: 'trust_authenticated' },
  });
  listener = await listenTls(createHandler({ auth: { type: 'none' }, services }), 2);
  agent = new Agent({ keepAlive: true, maxSockets: 2, ca: listener.ca });
}, 120_000);

afterAll(async () => {
  agent?.destroy();
  await listener?.close();
  await storage?.close();
});

describe('the ACME benchmark client', () => {
  it('registers an account and completes two issuances with the full flow', async () => {
    const client = new AcmeBenchClient({
      directoryUrl: `https://127.0.0.1:${listener.port}/acme/directory`,
      agent,
    });
    let handshakes = 0;
    listener.server.on('secureConnection', () => handshakes++);
    const account = await client.newAccount((await generateKeyPair('ECDSA-P256')).privateKey);
    expect(account.kid).toMatch(/\/acme\/account\/acct-/);
    const serials = new Set<string>();
    for (const name of ['one.bench.example.com', 'two.bench.example.com']) {
      const { privateKey } = await generateKeyPair('ECDSA-P256');
      const csr = createCertificationRequest({
        subject: `CN=${name}`,
        privateKey,
        subjectAltNames: [{ type: 'dns', value: name }],
      });
      const before = client.requests;
      const pem = await client.issue(account, name, csr);
      // new-nonce, new-order, authorization, finalize, certificate: nothing to poll here.
      expect(client.requests - before).toBe(5);
      const leaf = new X509Certificate(pem);
      expect(leaf.subjectAltName).toBe(`DNS:${name}`);
      serials.add(leaf.serialNumber);
    }
    expect(serials.size).toBe(2);
    // Keep-alive holds across every answer, HEAD new-nonce included: one connection did it all.
    expect(handshakes).toBe(1);
  });
});
