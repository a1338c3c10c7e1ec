import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcmeAccount } from '../domain/acme.js';
import type { NewAcmeAuthorization } from '../ports/acme-storage.js';
import type { Storage } from '../ports/storage.js';
import type { ContractOptions } from './ephemeral-contract.js';

/** What a factory hands the ACME storage contract suite: a migrated storage of its own. */
export interface AcmeStorageContractSubject {
  storage: Storage;
  close(): Promise<void>;
}

const HOUR = 3_600_000;

/**
 * The ACME order storage behaves the same on every engine, whichever way it reaches the
 * database (one data-modifying statement on PostgreSQL, a transaction elsewhere): an order is
 * stored with its authorizations and challenges and read back with them in creation order;
 * the certificate download reads the issued version with its order; finalize's claim
 * (`markIssued`) changes a ready or processing order without a certificate and nothing else.
 */
export function describeAcmeStorageContract(
  name: string,
  factory: () => Promise<AcmeStorageContractSubject>,
  options: ContractOptions = {},
): void {
  if (options.skip) {
    console.warn(`[acme storage contract] skipping ${name}: ${options.skip}`);
    describe.skip(`ACME storage contract: ${name}`, () => {
      it('skipped', () => {});
    });
    return;
  }

  describe(`ACME storage contract: ${name}`, () => {
    let subject: AcmeStorageContractSubject;
    let s: Storage;
    let account: AcmeAccount;
    beforeAll(async () => {
      subject = await factory();
      s = subject.storage;
      account = await s.acmeAccounts.create({
        profile_id: 'prof-default',
        status: 'valid',
        jwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' },
        jwk_thumbprint: `tp-${randomUUID()}`,
        contact: [],
        terms_agreed: true,
        eab_key_id: null,
        created_ip: null,
      });
    }, 120_000);
    afterAll(async () => {
      await subject?.close();
    });

    const authz = (value: string, challenges: string[] = []): NewAcmeAuthorization => ({
      identifier: { type: 'dns', value },
      wildcard: false,
      status: challenges.length > 0 ? 'pending' : 'valid',
      expires: new Date(Date.now() + HOUR),
      challenges: challenges.map((type) => ({
        type: type as 'http-01',
        token: randomUUID(),
        status: 'pending',
      })),
    });

    const order = (status: 'pending' | 'ready', names: string[], expires = new Date(Date.now() + HOUR)) => ({
      account_id: account.id,
      profile_id: 'prof-default',
      status,
      identifiers: names.map((value) => ({ type: 'dns' as const, value })),
      not_before: null,
      not_after: null,
      expires,
      acme_profile: null,
      replaces: null,
    });

    async function issuedVersion(tag: string) {
      const issuer = await s.issuers.create({ name: `issuer ${tag}`, type: 'Local', config: {} });
      const owner = await s.owners.create({ name: `owner ${tag}`, email: `${tag}@example.test` });
      const team = await s.teams.create({ name: `team ${tag}` });
      const policy = await s.renewalPolicies.create({ name: `policy ${tag}`, renewal_window_days: 30 });
      const certificate = await s.certificates.create({
        name: `acme ${tag}`,
        common_name: `${tag}.example.test`,
        issuer_id: issuer.id,
        owner_id: owner.id,
        team_id: team.id,
        renewal_policy_id: policy.id,
      });
      const now = Date.now();
      const version = await s.versions.create({
        certificate_id: certificate.id,
        issuer_id: issuer.id,
        serial_number: randomUUID().replace(/-/g, ''),
        fingerprint_sha256: randomUUID().replace(/-/g, '').repeat(2),
        key_algorithm: 'ECDSA',
        key_size: 256,
        subject: `CN=${tag}.example.test`,
        issued_at: new Date(now),
        not_before: new Date(now),
        not_after: new Date(now + 90 * 24 * HOUR),
        csr_pem: null,
        cert_pem: '-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n',
        chain_pem: '-----BEGIN CERTIFICATE-----\nMQ==\n-----END CERTIFICATE-----\n',
      });
      return { certificate, version };
    }

    it('stores an order with authorizations and challenges and reads them back in creation order', async () => {
      const created = await s.acmeOrders.create(order('pending', ['a.example.test', 'b.example.test']), [
        authz('a.example.test', ['http-01', 'dns-01', 'tls-alpn-01']),
        authz('b.example.test', ['dns-01']),
      ]);
      const read = await s.acmeOrders.getWithAuthorizations(created.order.id);
      expect(read?.order).toEqual(created.order);
      expect(read?.authorizations).toEqual(created.authorizations);
      expect(read?.authorizations.map((a) => a.identifier.value)).toEqual([
        'a.example.test',
        'b.example.test',
      ]);
      expect(read?.authorizations[0]?.challenges.map((c) => c.type)).toEqual([
        'http-01',
        'dns-01',
        'tls-alpn-01',
      ]);
      expect(await s.acmeAuthorizations.listForOrder(created.order.id)).toEqual(created.authorizations);
      const first = created.authorizations[0]!;
      expect(await s.acmeAuthorizations.get(first.id)).toEqual(first);
    });

    it('stores an order whose authorizations have no challenges, and reads an unknown one as null', async () => {
      const created = await s.acmeOrders.create(order('ready', ['c.example.test']), [
        authz('c.example.test'),
      ]);
      const read = await s.acmeOrders.getWithAuthorizations(created.order.id);
      expect(read?.authorizations).toEqual(created.authorizations);
      expect(read?.authorizations[0]?.challenges).toEqual([]);
      expect(await s.acmeOrders.getWithAuthorizations('acmeord-missing')).toBeNull();
      expect(await s.acmeOrders.getWithCertificate('acmeord-missing')).toBeNull();
      expect(await s.acmeAuthorizations.get('acmeauthz-missing')).toBeNull();
    });

    it('stores nothing when an authorization cannot be stored', async () => {
      const first = await s.acmeOrders.create(order('ready', ['d.example.test']), [authz('d.example.test')]);
      const taken = { ...authz('e.example.test'), id: first.authorizations[0]!.id };
      await expect(s.acmeOrders.create(order('ready', ['e.example.test']), [taken])).rejects.toThrow();
      const mine = await s.acmeOrders.listIdsForAccount(account.id, { perPage: 500 });
      expect(mine.total).toBe(mine.items.length);
      for (const id of mine.items) {
        const o = await s.acmeOrders.get(id);
        expect(o?.identifiers.map((i) => i.value)).not.toEqual(['e.example.test']);
      }
    });

    it('claims a ready order once, with its certificate, and reads the certificate with the order', async () => {
      const created = await s.acmeOrders.create(order('ready', ['f.example.test']), [
        authz('f.example.test'),
      ]);
      expect((await s.acmeOrders.getWithCertificate(created.order.id))?.certificate).toBeNull();
      const { certificate, version } = await issuedVersion(`f-${randomUUID().slice(0, 8)}`);
      const issued = { certificate_id: certificate.id, version_id: version.id };
      const claimed = await s.acmeOrders.markIssued(created.order.id, issued, new Date());
      expect(claimed).toMatchObject({ id: created.order.id, status: 'valid', ...issued });
      expect(await s.acmeOrders.get(created.order.id)).toEqual(claimed);
      // A second claim changes nothing.
      expect(await s.acmeOrders.markIssued(created.order.id, issued, new Date())).toBeNull();
      expect(await s.acmeOrders.getWithCertificate(created.order.id)).toEqual({
        order: claimed,
        certificate: {
          version_id: version.id,
          issuer_id: version.issuer_id,
          cert_pem: version.cert_pem,
          chain_pem: version.chain_pem,
        },
      });
    });

    it('claims an order inside a transaction with the certificate created just before, and writes that certificate even when the claim is refused', async () => {
      // Inside Storage.transaction a new certificate may wait to be written (storage-sql's
      // deferred inserts); the claim names it, so it must be stored by the time the claim is.
      const tag = `g-${randomUUID().slice(0, 8)}`;
      const { certificate: seed, version: seedVersion } = await issuedVersion(tag);
      const newPair = (n: number) => {
        const now = Date.now();
        return [
          {
            name: `acme ${tag} ${n}`,
            common_name: `${tag}-${n}.example.test`,
            issuer_id: seed.issuer_id,
            owner_id: seed.owner_id,
            team_id: seed.team_id,
            renewal_policy_id: seed.renewal_policy_id,
            status: 'Active' as const,
          },
          {
            issuer_id: seed.issuer_id,
            serial_number: randomUUID().replace(/-/g, ''),
            fingerprint_sha256: randomUUID().replace(/-/g, '').repeat(2),
            key_algorithm: 'ECDSA',
            key_size: 256,
            subject: `CN=${tag}-${n}.example.test`,
            issued_at: new Date(now),
            not_before: new Date(now),
            not_after: new Date(now + 90 * 24 * HOUR),
            csr_pem: null,
            cert_pem: seedVersion.cert_pem,
            chain_pem: seedVersion.chain_pem,
          },
        ] as const;
      };
      const ready = await s.acmeOrders.create(order('ready', [`${tag}-1.example.test`]), [
        authz(`${tag}-1.example.test`),
      ]);
      const claimed = await s.transaction(async (tx) => {
        const [c, v] = newPair(1);
        const stored = await tx.versions.createWithCertificate(c, v);
        const issued = { certificate_id: stored.certificate.id, version_id: stored.version.id };
        const order = await tx.acmeOrders.markIssued(ready.order.id, issued, new Date());
        expect(order).toMatchObject({ id: ready.order.id, status: 'valid', ...issued });
        // Read in the same transaction: the certificate is there.
        expect((await tx.certificates.get(stored.certificate.id))?.current_version_id).toBe(
          stored.version.id,
        );
        return { order, stored };
      });
      expect(await s.acmeOrders.get(ready.order.id)).toEqual(claimed.order);
      expect((await s.acmeOrders.getWithCertificate(ready.order.id))?.certificate?.version_id).toBe(
        claimed.stored.version.id,
      );
      // A refused claim (the order is valid now) changes no order; the certificate created
      // before it in the transaction is stored all the same, as the caller decides what to undo.
      const second = await s.transaction(async (tx) => {
        const [c, v] = newPair(2);
        const stored = await tx.versions.createWithCertificate(c, v);
        const issued = { certificate_id: stored.certificate.id, version_id: stored.version.id };
        expect(await tx.acmeOrders.markIssued(ready.order.id, issued, new Date())).toBeNull();
        return stored;
      });
      expect(await s.acmeOrders.get(ready.order.id)).toEqual(claimed.order);
      expect((await s.certificates.get(second.certificate.id))?.current_version_id).toBe(second.version.id);
    });

    it('lists accounts newest first, narrowed by profile and by status, with the total of the narrowed list', async () => {
      const tag = randomUUID().slice(0, 8);
      const profile = await s.profiles.create({ name: `acme list ${tag}`, max_validity_days: 90 });
      const open = async (status: AcmeAccount['status']) =>
        s.acmeAccounts.create({
          profile_id: profile.id,
          status,
          jwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' },
          jwk_thumbprint: `tp-${randomUUID()}`,
          contact: [`mailto:${status}-${tag}@example.test`],
          terms_agreed: true,
          eab_key_id: null,
          created_ip: null,
        });
      const first = await open('valid');
      const second = await open('deactivated');
      const third = await open('valid');
      const all = await s.acmeAccounts.list({ profile_id: profile.id });
      expect(all.total).toBe(3);
      // Same-millisecond creations tie on created_at; the set is what every engine must agree on.
      expect(new Set(all.items.map((a) => a.id))).toEqual(new Set([first.id, second.id, third.id]));
      const times = all.items.map((a) => a.created_at.getTime());
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(all.items.find((a) => a.id === second.id)?.contact).toEqual([
        `mailto:deactivated-${tag}@example.test`,
      ]);
      const valid = await s.acmeAccounts.list({ profile_id: profile.id, status: 'valid' });
      expect(valid.total).toBe(2);
      expect(new Set(valid.items.map((a) => a.id))).toEqual(new Set([first.id, third.id]));
      const onePage = await s.acmeAccounts.list({
        profile_id: profile.id,
        status: 'valid',
        perPage: 1,
        page: 2,
      });
      expect(onePage.total).toBe(2);
      expect(onePage.items).toHaveLength(1);
      const deactivated = await s.acmeAccounts.list({ profile_id: profile.id, status: 'deactivated' });
      expect(deactivated.items.map((a) => a.id)).toEqual([second.id]);
      expect((await s.acmeAccounts.list({ profile_id: profile.id, status: 'revoked' })).total).toBe(0);
      // The default profile's account is not in this profile's list, and is in the unfiltered one.
      expect(all.items.map((a) => a.id)).not.toContain(account.id);
      const everything = await s.acmeAccounts.list({ perPage: 500 });
      expect(everything.items.map((a) => a.id)).toContain(account.id);
    });

    it('claims neither a pending order nor a ready one past its expiry; a processing one it does', async () => {
      const { certificate, version } = await issuedVersion(`g-${randomUUID().slice(0, 8)}`);
      const issued = { certificate_id: certificate.id, version_id: version.id };
      const pending = await s.acmeOrders.create(order('pending', ['g.example.test']), [
        authz('g.example.test', ['http-01']),
      ]);
      expect(await s.acmeOrders.markIssued(pending.order.id, issued, new Date())).toBeNull();
      const expires = new Date(Date.now() + 60_000);
      const ready = await s.acmeOrders.create(order('ready', ['h.example.test'], expires), [
        authz('h.example.test'),
      ]);
      expect(
        await s.acmeOrders.markIssued(ready.order.id, issued, new Date(expires.getTime() + 1)),
      ).toBeNull();
      expect((await s.acmeOrders.get(ready.order.id))?.status).toBe('ready');
      expect((await s.acmeOrders.get(pending.order.id))?.status).toBe('pending');
      await s.acmeOrders.update(ready.order.id, { status: 'processing' });
      expect(
        await s.acmeOrders.markIssued(ready.order.id, issued, new Date(expires.getTime() + 1)),
      ).toMatchObject({
        status: 'valid',
        version_id: version.id,
      });
    });
  });
}
