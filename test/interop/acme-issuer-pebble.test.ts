/**
 * The ACME issuer connector against Debian's pebble, validating for real: certwright is the
 * ACME client, pebble the CA. http-01 is answered by certwright's own
 * `/.well-known/acme-challenge/{token}` route (pebble connects to the name, which
 * pebble-challtestsrv resolves to 127.0.0.1, on the port of this process's listener); dns-01
 * TXT records go through the pebble-challtestsrv DNS provider. Pebble rejects a share of
 * nonces at random, so every flow also proves the badNonce retry. Then renewal (a new serial)
 * and revocation (pebble's own record of the certificate says Revoked).
 */
import { createPublicKey, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../packages/core/src/index.js';
import {
  certificationRequestToPem,
  createCertificationRequest,
  generateKeyPair,
} from '../../packages/core/src/pki/index.js';
import {
  type CertwrightApp,
  createCertwrightApp,
  httpGet,
  listenHttp,
  type RealPebble,
  startRealPebble,
} from './support/acme-issuer.js';
import { type ChallTestSrv, startChallTestSrv } from './support/acme-server.js';

let dns: (ChallTestSrv & { managementPort: number }) | undefined;
let pebble: RealPebble | undefined;
let app: CertwrightApp;
let http: Awaited<ReturnType<typeof listenHttp>> | undefined;

beforeAll(async () => {
  app = await createCertwrightApp();
  http = await listenHttp(app.handler);
  dns = await startChallTestSrv();
  pebble = await startRealPebble({ httpPort: http.port, dnsServer: dns.dns, nonceRejectPercent: 15 });
}, 120_000);

afterAll(async () => {
  await pebble?.stop();
  dns?.stop();
  await http?.close();
  await app?.close();
});

async function acmeIssuer(name: string, config: Record<string, unknown>) {
  return app.services.issuers.create(SYSTEM_ACTOR, {
    name,
    type: 'ACME',
    config: {
      directory_url: pebble!.directoryUrl,
      ca_bundle_pem: pebble!.tlsCa,
      contact: ['mailto:pki@example.test'],
      ...config,
    },
  });
}

async function certificate(issuerId: string, commonName: string, sans: string[]) {
  return app.services.certificates.create(SYSTEM_ACTOR, {
    name: `acme ${commonName}`,
    common_name: commonName,
    sans,
    renewal_policy_id: 'rp-default',
    issuer_id: issuerId,
    owner_id: app.ids.owner,
    team_id: app.ids.team,
  });
}

/** The chain pebble sent verifies up to pebble's root (fetched from its management API). */
async function expectChainsToPebble(certPem: string, chainPem: string) {
  const root = await pebble!.manage('/roots/0');
  expect(root.status).toBe(200);
  const leaf = new X509Certificate(certPem);
  const chain = chainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
  expect(chain.length).toBeGreaterThan(0);
  const intermediate = new X509Certificate(chain[0]!);
  expect(leaf.verify(intermediate.publicKey)).toBe(true);
  expect(intermediate.verify(new X509Certificate(root.body).publicKey)).toBe(true);
}

describe('ACME issuer against pebble', () => {
  it('issues with http-01 answered by the reference server, renews with a new serial, revokes at the CA', async () => {
    const issuer = await acmeIssuer('pebble http-01', { challenge_type: 'http-01' });
    const cert = await certificate(issuer.id, 'web.acme-issuer.test', [
      'web.acme-issuer.test',
      'www.acme-issuer.test',
    ]);
    const first = await app.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id);
    expect(first.job.status).toBe('Completed');
    const v1 = first.version!;
    await expectChainsToPebble(v1.cert_pem, v1.chain_pem ?? '');
    const x509 = new X509Certificate(v1.cert_pem);
    expect(x509.subjectAltName).toContain('DNS:web.acme-issuer.test');
    expect(x509.subjectAltName).toContain('DNS:www.acme-issuer.test');
    // The server-generated key is the one certified.
    const exported = await app.services.pki.lifecycle.export(cert.id, 'pem');
    expect(exported).toBeDefined();
    // The challenge answer is gone once validation is over.
    expect(
      (
        await httpGet(
          http!.port,
          '/.well-known/acme-challenge/AAAAAAAAAAAAAAAAAAAAAAAA',
          'web.acme-issuer.test',
        )
      ).status,
    ).toBe(404);

    const renewed = await app.services.pki.lifecycle.renew(SYSTEM_ACTOR, cert.id);
    const v2 = renewed.version!;
    expect(v2.serial_number).not.toBe(v1.serial_number);
    expect(v2.id).not.toBe(v1.id);
    await expectChainsToPebble(v2.cert_pem, v2.chain_pem ?? '');

    // The CA's own record: pebble's management API answers each certificate's status.
    const before = await pebble!.manage(`/cert-status-by-serial/${v2.serial_number}`);
    expect(before.status).toBe(200);
    expect(JSON.parse(before.body).Status).toBe('Valid');
    await app.services.certificates.revoke(SYSTEM_ACTOR, cert.id, 'keyCompromise');
    const after = await pebble!.manage(`/cert-status-by-serial/${v2.serial_number}`);
    expect(JSON.parse(after.body).Status).toBe('Revoked');
    expect(JSON.parse(after.body).Reason).toBe(1);
  });

  it('finalizes with the requester’s own CSR (agent-held keys), and refuses one whose names differ from the order', async () => {
    const issuer = await acmeIssuer('pebble csr', { challenge_type: 'http-01' });
    const key = await generateKeyPair('ECDSA-P256');
    const names = ['agent.acme-issuer.test', 'alt.acme-issuer.test'];
    const csrPem = certificationRequestToPem(
      createCertificationRequest({
        subject: [{ type: 'CN', value: names[0]! }],
        privateKey: key.privateKey,
        subjectAltNames: names.map((value) => ({ type: 'dns' as const, value })),
      }),
    );
    const cert = await certificate(issuer.id, names[0]!, names);
    const issued = (await app.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id, { csr_pem: csrPem }))
      .version!;
    // The CA certified the requester's key; the service never held the private key.
    expect(new X509Certificate(issued.cert_pem).publicKey.equals(createPublicKey(key.privateKey))).toBe(true);
    expect((await app.services.deps.storage.versions.getWithKey(issued.id))?.private_key_pem).toBeNull();

    // A CSR naming only one of the certificate's two names cannot finalize that order.
    const partialCsr = certificationRequestToPem(
      createCertificationRequest({
        subject: [{ type: 'CN', value: 'half.acme-issuer.test' }],
        privateKey: key.privateKey,
        subjectAltNames: [{ type: 'dns', value: 'half.acme-issuer.test' }],
      }),
    );
    const half = await certificate(issuer.id, 'half.acme-issuer.test', [
      'half.acme-issuer.test',
      'other.acme-issuer.test',
    ]);
    const error = await app.services.pki.lifecycle
      .issue(SYSTEM_ACTOR, half.id, { csr_pem: partialCsr })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'validation_failed', reason: 'names_mismatch' });
    expect((error as Error).message).toContain('the CSR lacks dns:other.acme-issuer.test');
  });

  it('issues with dns-01 through the pebble-challtestsrv DNS provider, the account reused', async () => {
    const issuer = await acmeIssuer('pebble dns-01', {
      challenge_type: 'dns-01',
      dns_provider: {
        type: 'pebble-challtestsrv',
        management_url: `http://127.0.0.1:${dns!.managementPort}`,
      },
    });
    const a = await certificate(issuer.id, 'dns.acme-issuer.test', ['dns.acme-issuer.test']);
    const issued = await app.services.pki.lifecycle.issue(SYSTEM_ACTOR, a.id);
    await expectChainsToPebble(issued.version!.cert_pem, issued.version!.chain_pem ?? '');
    // A wildcard can only be proven by dns-01.
    const b = await certificate(issuer.id, '*.wild.acme-issuer.test', ['*.wild.acme-issuer.test']);
    const wild = await app.services.pki.lifecycle.issue(SYSTEM_ACTOR, b.id);
    expect(new X509Certificate(wild.version!.cert_pem).subjectAltName).toContain(
      'DNS:*.wild.acme-issuer.test',
    );
    // Both issuances used one account, whose key stayed sealed in the config.
    const stored = await app.services.deps.storage.issuers.getWithConfig(issuer.id);
    const account = stored!.config.acme_account as { url: string; key_pem: string };
    expect(account.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\//);
    expect(account.key_pem).toContain('PRIVATE KEY');
    // …and never in the API's issuer record.
    const record = await app.services.issuers.get(issuer.id);
    expect(JSON.stringify(record)).not.toContain('PRIVATE KEY');
    expect(record).not.toHaveProperty('config');
  });

  it('a challenge the CA cannot validate fails the job at once with the ACME error type, nothing stored', async () => {
    // A DNS provider that publishes nothing: pebble finds no TXT record and the authorization
    // goes invalid (unauthorized), which no retry would change.
    const silent = await createCertwrightApp(undefined, {
      acmeIssuer: { dnsProvider: () => ({ present: async () => {}, cleanup: async () => {} }) },
    });
    try {
      const issuer = await silent.services.issuers.create(SYSTEM_ACTOR, {
        name: 'pebble silent dns',
        type: 'ACME',
        config: {
          directory_url: pebble!.directoryUrl,
          ca_bundle_pem: pebble!.tlsCa,
          challenge_type: 'dns-01',
          dns_provider: { type: 'pebble-challtestsrv', management_url: 'http://127.0.0.1:1' },
        },
      });
      const cert = await silent.services.certificates.create(SYSTEM_ACTOR, {
        name: 'silent',
        common_name: 'silent.acme-issuer.test',
        sans: ['silent.acme-issuer.test'],
        renewal_policy_id: 'rp-default',
        issuer_id: issuer.id,
        owner_id: silent.ids.owner,
        team_id: silent.ids.team,
      });
      const error = await silent.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'validation_failed', reason: 'incorrect_response' });
      const job = (await silent.services.jobs.list({ certificate_id: cert.id })).data[0]!;
      expect(job.status).toBe('Failed');
      expect(job.last_error).toMatch(
        /^the ACME server answered the authorization of silent\.acme-issuer\.test with (unauthorized|dns): the certificate authority could not validate control of the names$/,
      );
      expect((await silent.services.certificates.get(cert.id)).status).toBe('Failed');
      expect((await silent.services.certificates.versions(cert.id)).total).toBe(0);
    } finally {
      await silent.close();
    }
  });

  it('an unreachable challenge fails the job with a clear reason and no internal cause', async () => {
    const issuer = await acmeIssuer('pebble wrong dns', {
      challenge_type: 'dns-01',
      dns_provider: {
        type: 'pebble-challtestsrv',
        management_url: `http://127.0.0.1:${dns!.managementPort}`,
      },
    });
    const cert = await certificate(issuer.id, 'nxtxt.acme-issuer.test', ['nxtxt.acme-issuer.test']);
    const stored = await app.services.deps.storage.issuers.getWithConfig(issuer.id);
    // Break the provider after creation: publish to a port where nothing listens.
    await app.services.deps.storage.issuers.update(issuer.id, {
      config: {
        ...stored!.config,
        dns_provider: { type: 'pebble-challtestsrv', management_url: 'http://127.0.0.1:1' },
      },
    });
    app.services.pki.lifecycle.connectors.invalidate(issuer.id);
    const error = await app.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'CertwrightError' });
    const jobs = await app.services.jobs.list({ certificate_id: cert.id });
    const lastError = jobs.data[0]!.last_error ?? '';
    expect(lastError).toBe(
      'the DNS provider (config.dns_provider) could not be reached for /set-txt; try again later',
    );
    expect((error as { reason: string }).reason).toBe('unavailable');
    expect((await app.services.certificates.versions(cert.id)).total).toBe(0);
  });
});
