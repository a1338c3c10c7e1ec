/**
 * The ACME issuer connector against certwright's own ACME server: one in-process certwright
 * (the CA) serves its reference handler over TLS on 127.0.0.1 with external account binding
 * required; another (the client) has an ACME issuer pointing at that directory with the EAB
 * credentials, the CA's TLS certificate as `ca_bundle_pem` and the directory's profile. The
 * CA's profile trusts authenticated accounts (no challenges), so what is proven here is the
 * account (EAB), profiles, ARI `replaces` on renewal and revokeCert.
 */
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_ACTOR } from '../../packages/core/src/index.js';
import { type CertwrightApp, createCertwrightApp, listenHttps } from './support/acme-issuer.js';

let ca: CertwrightApp;
let client: CertwrightApp;
let listener: Awaited<ReturnType<typeof listenHttps>> | undefined;
let directoryUrl: string;
let eab: { kid: string; hmac: string };

beforeAll(async () => {
  ca = await createCertwrightApp();
  client = await createCertwrightApp();
  await ca.services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
    acme: {
      enabled: true,
      auth_mode: 'trust_authenticated',
      eab_required: true,
      rate_limits: { orders_per_account_per_hour: null, accounts_per_ip_per_hour: null },
    },
  });
  await ca.services.pki.lifecycle.caChain('iss-local');
  const created = await ca.handler.servers!.acme.accounts.createEabKey(SYSTEM_ACTOR, {
    profile_id: 'prof-default',
    name: 'certwright client',
  });
  eab = { kid: created.key.id, hmac: created.hmac_key };
  listener = await listenHttps(ca.handler);
  directoryUrl = `https://127.0.0.1:${listener.port}/acme/directory`;
}, 120_000);

afterAll(async () => {
  await listener?.close();
  await client?.close();
  await ca?.close();
});

async function issuerWith(name: string, config: Record<string, unknown>) {
  return client.services.issuers.create(SYSTEM_ACTOR, {
    name,
    type: 'ACME',
    config: { directory_url: directoryUrl, ca_bundle_pem: listener!.ca, ...config },
  });
}

async function certificate(issuerId: string, name: string) {
  return client.services.certificates.create(SYSTEM_ACTOR, {
    name,
    common_name: name,
    sans: [name],
    renewal_policy_id: 'rp-default',
    issuer_id: issuerId,
    owner_id: client.ids.owner,
    team_id: client.ids.team,
  });
}

/** The CA's inventory entry of a serial: its ACME-sourced certificate and version. */
async function atCa(serial: string) {
  const list = await ca.services.certificates.list({ source: 'ACME', per_page: 100 });
  for (const cert of list.data) {
    const versions = await ca.services.certificates.versions(cert.id);
    const version = versions.data.find((v) => v.serial_number === serial);
    if (version) return { certificate: cert, version, versions: versions.data };
  }
  throw new Error(`the CA holds no ACME certificate with serial ${serial}`);
}

describe('ACME issuer against certwright’s own ACME server (EAB required)', () => {
  it('registers with EAB, issues under the profile, renews with ARI replaces, revokes at the CA', async () => {
    const issuer = await issuerWith('certwright acme', {
      eab_kid: eab.kid,
      eab_hmac_key: eab.hmac,
      profile: 'prof-default',
      contact: ['mailto:pki@example.test'],
    });
    const cert = await certificate(issuer.id, 'svc.certwright-acme.test');
    const first = (await client.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id)).version!;
    const chain = await ca.services.pki.lifecycle.caChain('iss-local');
    const leaf = new X509Certificate(first.cert_pem);
    expect(leaf.verify(new X509Certificate(chain[0]!).publicKey)).toBe(true);
    expect(leaf.subjectAltName).toBe('DNS:svc.certwright-acme.test');
    const issuedAtCa = await atCa(first.serial_number);
    expect(issuedAtCa.version.cert_pem).toBe(first.cert_pem);

    // Renewal names the certificate it replaces (RFC 9773): the CA records the new
    // certificate as a new version of the same inventory entry.
    const second = (await client.services.pki.lifecycle.renew(SYSTEM_ACTOR, cert.id)).version!;
    expect(second.serial_number).not.toBe(first.serial_number);
    const renewedAtCa = await atCa(second.serial_number);
    expect(renewedAtCa.certificate.id).toBe(issuedAtCa.certificate.id);
    expect(renewedAtCa.versions.map((v) => v.serial_number).sort()).toEqual(
      [first.serial_number, second.serial_number].sort(),
    );

    // Revocation in the client's inventory is told to the CA (revokeCert with the account key).
    await client.services.certificates.revoke(SYSTEM_ACTOR, cert.id, 'superseded');
    const revokedAtCa = await atCa(second.serial_number);
    expect(revokedAtCa.version.revoked_at).not.toBeNull();
    expect(revokedAtCa.version.revocation_reason).toBe('superseded');

    // Replacing the settings keeps the account (managed state); the rebuilt connector finds it
    // with onlyReturnExisting instead of registering again (the EAB key would not allow that).
    const accountBefore = (await client.services.deps.storage.issuers.getWithConfig(issuer.id))!.config
      .acme_account;
    await client.services.issuers.update(SYSTEM_ACTOR, issuer.id, {
      config: {
        directory_url: directoryUrl,
        ca_bundle_pem: listener!.ca,
        eab_kid: eab.kid,
        eab_hmac_key: eab.hmac,
        contact: ['mailto:other@example.test'],
      },
    });
    const accountAfter = (await client.services.deps.storage.issuers.getWithConfig(issuer.id))!.config
      .acme_account;
    expect(accountAfter).toEqual(accountBefore);
    expect(issuedAtCa.certificate.metadata.acme_account_id).toMatch(/.+/);
    const again = await certificate(issuer.id, 'again.certwright-acme.test');
    const third = (await client.services.pki.lifecycle.issue(SYSTEM_ACTOR, again.id)).version!;
    expect((await atCa(third.serial_number)).certificate.metadata).toMatchObject({
      acme_account_id: issuedAtCa.certificate.metadata.acme_account_id,
    });
    expect(
      (await client.services.deps.storage.issuers.getWithConfig(issuer.id))!.config.acme_account,
    ).toEqual(accountBefore);
  });

  it('without EAB the CA refuses the account: the job fails naming externalAccountRequired', async () => {
    const issuer = await issuerWith('certwright acme no eab', {});
    const cert = await certificate(issuer.id, 'noeab.certwright-acme.test');
    const error = await client.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'issuer_not_ready' });
    const job = (await client.services.jobs.list({ certificate_id: cert.id })).data[0]!;
    expect(job.last_error).toMatch(/new-account with externalAccountRequired/);
    expect((await client.services.certificates.versions(cert.id)).total).toBe(0);

    // A wrong HMAC key: the CA refuses the binding, and the job says it is the account.
    const wrong = await issuerWith('certwright acme wrong eab', {
      eab_kid: eab.kid,
      eab_hmac_key: Buffer.alloc(32, 7).toString('base64url'),
    });
    const other = await certificate(wrong.id, 'wrongeab.certwright-acme.test');
    const refused = await client.services.pki.lifecycle
      .issue(SYSTEM_ACTOR, other.id)
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ reason: 'issuer_not_ready' });
    expect((refused as Error).message).toMatch(/^the ACME server answered new-account with \w+: /);
  });

  it('a rate-limited order leaves the job to retry no sooner than the CA’s Retry-After', async () => {
    await ca.services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
      acme: { rate_limits: { orders_per_account_per_hour: 1, accounts_per_ip_per_hour: null } },
    });
    try {
      const key = await ca.handler.servers!.acme.accounts.createEabKey(SYSTEM_ACTOR, {
        profile_id: 'prof-default',
        name: 'rate-limited client',
      });
      const issuer = await issuerWith('certwright acme limited', {
        eab_kid: key.key.id,
        eab_hmac_key: key.hmac_key,
      });
      const policy = await client.services.renewalPolicies.create(SYSTEM_ACTOR, {
        name: 'retry after a minute',
        renewal_window_days: 30,
        alert_thresholds_days: [],
        retry_interval_seconds: 60,
      });
      const cert = await client.services.certificates.create(SYSTEM_ACTOR, {
        name: 'limited.certwright-acme.test',
        common_name: 'limited.certwright-acme.test',
        sans: ['limited.certwright-acme.test'],
        renewal_policy_id: policy.id,
        issuer_id: issuer.id,
        owner_id: client.ids.owner,
        team_id: client.ids.team,
      });
      await client.services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id); // the hour's one order
      const job = await client.services.pki.lifecycle.openJob(cert.id, 'Renewal');
      const ranAt = Date.now();
      await client.services.pki.lifecycle.processDueJobs();
      const after = (await client.services.jobs.list({ certificate_id: cert.id, type: 'Renewal' })).data.find(
        (j) => j.id === job.id,
      )!;
      expect(after.status).toBe('Pending');
      const said =
        /^the ACME server answered new-order with rateLimited: the certificate authority rate-limits this account; retry after (\d+) s$/.exec(
          after.last_error ?? '',
        );
      expect(said, after.last_error ?? '').not.toBeNull();
      const seconds = Number(said![1]);
      // The CA asked for more than the policy's minute: the retry waits for the CA.
      expect(seconds).toBeGreaterThan(60);
      expect(new Date(after.scheduled_at!).getTime()).toBeGreaterThanOrEqual(ranAt + seconds * 1000 - 1000);
      expect((await client.services.certificates.versions(cert.id)).total).toBe(1);
    } finally {
      await ca.services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
        acme: { rate_limits: { orders_per_account_per_hour: null, accounts_per_ip_per_hour: null } },
      });
    }
  });

  it('refuses bad settings at creation, naming each key, and stores nothing', async () => {
    const before = (await client.services.issuers.list({ type: 'ACME' })).total;
    const error = await client.services.issuers
      .create(SYSTEM_ACTOR, {
        name: 'bad acme',
        type: 'ACME',
        config: {
          directory_url: 'ftp://example.test/dir',
          eab_kid: 'only-kid',
          challenge_type: 'tls-alpn-01',
          unknown_setting: true,
        },
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'validation_failed' });
    const fields = (error as { fields: { field: string }[] }).fields.map((f) => f.field).sort();
    expect(fields).toEqual(['config', 'config.challenge_type', 'config.directory_url']);
    const managed = await client.services.issuers
      .create(SYSTEM_ACTOR, {
        name: 'forged acme',
        type: 'ACME',
        config: { directory_url: directoryUrl, acme_account: { key_pem: 'x' } },
      })
      .catch((e: unknown) => e);
    expect(managed).toMatchObject({ code: 'validation_failed', fields: [{ field: 'config.acme_account' }] });
    const dns = await client.services.issuers
      .create(SYSTEM_ACTOR, {
        name: 'dns acme',
        type: 'ACME',
        config: { directory_url: directoryUrl, challenge_type: 'dns-01' },
      })
      .catch((e: unknown) => e);
    expect(dns).toMatchObject({ fields: [{ field: 'config.dns_provider' }] });
    expect((await client.services.issuers.list({ type: 'ACME' })).total).toBe(before);
  });
});
