import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SENTINEL_AGENT_IDS } from '../domain/agent.js';
import type { CertificateStatus, CertificateVersion } from '../domain/certificate.js';
import { JOB_STATUSES } from '../domain/job.js';
import { DEFAULT_RENEWAL_POLICY_ID } from '../domain/renewal-policy.js';
import { isCertwrightError } from '../errors.js';
import { type CrlEntry, encodeCrlEntry } from '../pki/crl.js';
import type { CertificateListKey, NewCertificateVersion, RevokedEntry, Storage } from '../ports/storage.js';
import type { ContractOptions } from './ephemeral-contract.js';
import { describeScepProbeRepository } from './scep-probe-contract.js';
import { describeRowLocks } from './storage-locks.js';

/** What a factory hands the storage contract suite: a migrated storage on a fresh database. */
export interface StorageContractSubject {
  storage: Storage;
  /** Runs migrations and seed again (must be a no-op on a current schema). */
  migrate(): Promise<unknown>;
  appliedMigrations(): Promise<number[]>;
  close(): Promise<void>;
  /**
   * A second storage on the same database with state of its own, as another instance of the
   * server would have (closed by `close`): the audit chain must stay one chain when both append.
   */
  another?: Storage;
}

const codeOf = async (p: Promise<unknown>): Promise<unknown> => {
  try {
    await p;
    return 'resolved';
  } catch (error) {
    return isCertwrightError(error) ? error.code : error;
  }
};

const DAY = 86_400_000;
const hex = (n: number) => n.toString(16).padStart(2, '0');
const fingerprint = () => randomUUID().replace(/-/g, '').repeat(2);

/**
 * The behaviour every {@link Storage} must have: typed errors, transactions, the inventory's
 * queries, sealed secrets, concurrency rules. `factory` runs once per suite and must return a
 * storage on a database of its own (tests create rows but never assume an otherwise empty one).
 */
export function describeStorageContract(
  name: string,
  factory: () => Promise<StorageContractSubject>,
  options: ContractOptions = {},
): void {
  if (options.skip) {
    console.warn(`[storage contract] skipping ${name}: ${options.skip}`);
    describe.skip(`Storage contract: ${name}`, () => {
      it('skipped', () => {});
    });
    return;
  }

  describe(`Storage contract: ${name}`, () => {
    let subject: StorageContractSubject;
    let s: Storage;

    beforeAll(async () => {
      subject = await factory();
      s = subject.storage;
    }, 120_000);
    afterAll(async () => {
      await subject?.close();
    });

    /** Owner, team, issuer and renewal policy for certificates of one test. */
    async function refs(tag = randomUUID().slice(0, 8)) {
      const owner = await s.owners.create({ name: `owner ${tag}`, email: `${tag}@example.test` });
      const team = await s.teams.create({ name: `team ${tag}` });
      const issuer = await s.issuers.create({
        name: `issuer ${tag}`,
        type: 'Local',
        config: { token: `secret-${tag}` },
      });
      const policy = await s.renewalPolicies.create({ name: `policy ${tag}`, renewal_window_days: 30 });
      const base = {
        owner_id: owner.id,
        team_id: team.id,
        issuer_id: issuer.id,
        renewal_policy_id: policy.id,
      };
      return { owner, team, issuer, policy, base, tag };
    }

    function versionInput(
      certificate_id: string,
      issuer_id: string,
      notAfter: Date,
      serial: string,
    ): NewCertificateVersion {
      return {
        certificate_id,
        issuer_id,
        serial_number: serial,
        fingerprint_sha256: fingerprint(),
        key_algorithm: 'ECDSA',
        key_size: 256,
        subject: 'CN=test',
        issued_at: new Date(notAfter.getTime() - 90 * DAY),
        not_before: new Date(notAfter.getTime() - 90 * DAY),
        not_after: notAfter,
        csr_pem: null,
        cert_pem: '-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n',
        chain_pem: '',
      };
    }

    describe('schema and seed', () => {
      it('seeds the four sentinel agents and the default renewal policy', async () => {
        for (const id of SENTINEL_AGENT_IDS) expect((await s.agents.get(id))?.id).toBe(id);
        expect(await s.renewalPolicies.get(DEFAULT_RENEWAL_POLICY_ID)).toMatchObject({
          renewal_window_days: 30,
        });
      });

      it('runs migrations twice and four at once, leaving one schema and one seed', async () => {
        const before = await subject.appliedMigrations();
        expect(before.length).toBeGreaterThan(0);
        await subject.migrate();
        await Promise.all([subject.migrate(), subject.migrate(), subject.migrate(), subject.migrate()]);
        expect(await subject.appliedMigrations()).toEqual(before);
        const agents = await s.agents.list({ perPage: 500 });
        expect(
          agents.items.filter((a) => (SENTINEL_AGENT_IDS as readonly string[]).includes(a.id)),
        ).toHaveLength(4);
      });

      it('keeps an operator edit of seeded rows across a re-run', async () => {
        await s.renewalPolicies.update(DEFAULT_RENEWAL_POLICY_ID, { renewal_window_days: 45 });
        await subject.migrate();
        expect((await s.renewalPolicies.require(DEFAULT_RENEWAL_POLICY_ID)).renewal_window_days).toBe(45);
        await s.renewalPolicies.update(DEFAULT_RENEWAL_POLICY_ID, { renewal_window_days: 30 });
      });

      it('answers ping', async () => {
        await s.ping();
      });
    });

    describe('typed errors', () => {
      it('maps a duplicate unique value to conflict', async () => {
        const name = `dup ${randomUUID()}`;
        await s.teams.create({ name });
        expect(await codeOf(s.teams.create({ name }))).toBe('conflict');
      });

      it('maps a missing referenced record to invalid_reference', async () => {
        const { base } = await refs();
        expect(
          await codeOf(
            s.certificates.create({ ...base, issuer_id: 'iss-missing', name: 'x', common_name: 'x.test' }),
          ),
        ).toBe('invalid_reference');
        expect(await codeOf(s.targets.create({ agent_id: 'ag-missing', name: 't', type: 'NGINX' }))).toBe(
          'invalid_reference',
        );
      });

      it('maps unknown ids to not_found on update, delete and require', async () => {
        expect(await codeOf(s.owners.update('own-missing', { name: 'x' }))).toBe('not_found');
        expect(await codeOf(s.owners.delete('own-missing'))).toBe('not_found');
        expect(await codeOf(s.certificates.require('mc-missing'))).toBe('not_found');
        expect(await s.certificates.get('mc-missing')).toBeNull();
      });

      it('refuses to delete a record still referenced, with conflict', async () => {
        const { base, policy, owner } = await refs();
        await s.certificates.create({ ...base, name: 'ref', common_name: 'ref.test' });
        expect(await s.renewalPolicies.references(policy.id)).toEqual({ certificates: 1 });
        expect(await codeOf(s.renewalPolicies.delete(policy.id))).toBe('conflict');
        expect(await codeOf(s.owners.delete(owner.id))).toBe('conflict');
        expect(await s.renewalPolicies.get(policy.id)).not.toBeNull();
      });
    });

    describe('transactions', () => {
      it('leaves no row behind when the function throws', async () => {
        const name = `rolled back ${randomUUID()}`;
        const boom = new Error('boom');
        await expect(
          s.transaction(async (tx) => {
            await tx.owners.create({ name });
            await tx.teams.create({ name });
            throw boom;
          }),
        ).rejects.toBe(boom);
        expect((await s.owners.list({ search: name })).total).toBe(0);
        expect((await s.teams.list({ search: name })).total).toBe(0);
      });

      it('rolls back everything when a statement fails mid-way', async () => {
        const name = `partial ${randomUUID()}`;
        const err = await codeOf(
          s.transaction(async (tx) => {
            await tx.teams.create({ name });
            await tx.teams.create({ name });
          }),
        );
        expect(err).toBe('conflict');
        expect((await s.teams.list({ search: name })).total).toBe(0);
      });

      it('commits when the function resolves, and nested calls join', async () => {
        const name = `committed ${randomUUID()}`;
        const id = await s.transaction(async (tx) =>
          tx.transaction(async (inner) => (await inner.owners.create({ name })).id),
        );
        expect((await s.owners.require(id)).name).toBe(name);
      });

      it('offers inside a transaction every repository of the storage, each working on that transaction', async () => {
        const operations = (repository: unknown) =>
          Object.entries(repository as object)
            .filter(([, v]) => typeof v === 'function')
            .map(([k]) => k)
            .sort();
        const repositories = Object.entries(s).filter(
          ([, v]) => typeof v === 'object' && v !== null && operations(v).length > 0,
        );
        expect(repositories.length).toBeGreaterThan(20);
        await s.transaction(async (tx) => {
          for (const [name, repository] of repositories) {
            expect({ name, ops: operations(tx[name as keyof Storage]) }).toEqual({
              name,
              ops: operations(repository),
            });
          }
        });
        // Each transaction's repositories are its own: a later one neither writes into an
        // earlier, finished one nor misses what it committed.
        const name = `per transaction ${randomUUID()}`;
        const team = await s.transaction((tx) => tx.teams.create({ name }));
        await expect(
          s.transaction(async (tx) => {
            expect((await tx.teams.require(team.id)).name).toBe(name);
            await tx.teams.update(team.id, { name: `${name} renamed` });
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        expect(await s.transaction((tx) => tx.teams.require(team.id))).toMatchObject({ name });
      });

      it('runs after-commit callbacks once the change is visible, and never after a rollback', async () => {
        const name = `after commit ${randomUUID()}`;
        const seen: string[] = [];
        const id = await s.transaction(async (tx) => {
          const owner = await tx.owners.create({ name });
          tx.afterCommit(async () => {
            // A callback sees the committed row from outside the transaction.
            seen.push((await s.owners.require(owner.id)).name);
          });
          await tx.transaction(async (inner) => {
            inner.afterCommit(() => seen.push('nested'));
          });
          expect(seen).toEqual([]);
          return owner.id;
        });
        await expect.poll(() => seen.length).toBe(2);
        // Started in registration order; the first one finishes later because it awaits a read.
        expect(seen).toEqual(['nested', name]);
        expect((await s.owners.require(id)).name).toBe(name);

        let rolledBack = false;
        await expect(
          s.transaction(async (tx) => {
            tx.afterCommit(() => {
              rolledBack = true;
            });
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        let outside = false;
        s.afterCommit(() => {
          outside = true;
        });
        expect(outside).toBe(true);
        expect(rolledBack).toBe(false);
      });
    });

    describe('renewal policies', () => {
      it('derives rp-<slug> ids and applies the spec defaults', async () => {
        const tag = randomUUID().slice(0, 8);
        const p = await s.renewalPolicies.create({ name: `Web Servers ${tag}` });
        expect(p).toMatchObject({
          id: `rp-web-servers-${tag}`,
          renewal_window_days: 30,
          retry_interval_seconds: 3600,
          alert_thresholds_days: [30, 14, 7, 0],
          max_retries: null,
        });
        expect(await s.renewalPolicies.getByName(`Web Servers ${tag}`)).toEqual(p);
        expect(await codeOf(s.renewalPolicies.create({ name: `Web Servers ${tag}`, id: 'rp-other' }))).toBe(
          'conflict',
        );
        const other = await s.renewalPolicies.create({ name: `Other ${tag}` });
        expect(await codeOf(s.renewalPolicies.update(other.id, { name: p.name }))).toBe('conflict');
      });
    });

    describe('profiles', () => {
      it('stores allow_ip_sans: false unless asked, true when asked, and keeps an update of it', async () => {
        const tag = randomUUID().slice(0, 8);
        const plain = await s.profiles.create({ name: `plain ${tag}`, max_validity_days: 90 });
        expect(plain.allow_ip_sans).toBe(false);
        expect((await s.profiles.require(plain.id)).allow_ip_sans).toBe(false);
        const ips = await s.profiles.create({
          name: `ips ${tag}`,
          max_validity_days: 90,
          allow_ip_sans: true,
        });
        expect((await s.profiles.require(ips.id)).allow_ip_sans).toBe(true);
        await s.profiles.update(plain.id, { allow_ip_sans: true });
        expect((await s.profiles.require(plain.id)).allow_ip_sans).toBe(true);
        await s.profiles.update(ips.id, { name: `ips renamed ${tag}` });
        expect((await s.profiles.require(ips.id)).allow_ip_sans).toBe(true);
        await s.profiles.update(ips.id, { allow_ip_sans: false });
        expect((await s.profiles.require(ips.id)).allow_ip_sans).toBe(false);
      });
    });

    describe('reference-data search', () => {
      it('finds owners, teams, issuers, profiles and renewal policies by a case-insensitive substring of the name, wildcards literal', async () => {
        const tag = randomUUID().slice(0, 8);
        const name = `Search_${tag} 100%`;
        await s.owners.create({ name });
        await s.teams.create({ name });
        await s.issuers.create({ name, type: 'Local', config: {} });
        await s.profiles.create({ name, max_validity_days: 90 });
        await s.renewalPolicies.create({ name });
        // A decoy that `_` or `%` as wildcards would match.
        await s.owners.create({ name: `SearchX${tag} 1000` });
        const lists = {
          owners: (search: string) => s.owners.list({ search }),
          teams: (search: string) => s.teams.list({ search }),
          issuers: (search: string) => s.issuers.list({ search }),
          profiles: (search: string) => s.profiles.list({ search }),
          renewalPolicies: (search: string) => s.renewalPolicies.list({ search }),
        };
        for (const [what, list] of Object.entries(lists)) {
          const hit = await list(`search_${tag.toUpperCase()}`);
          expect(
            hit.items.map((r) => r.name),
            what,
          ).toEqual([name]);
          expect(hit.total, what).toBe(1);
          expect((await list(`${tag} 100%`)).total, what).toBe(1);
          expect((await list(`${tag} 10%0`)).total, what).toBe(0);
        }
        expect((await s.owners.list({ search: `search_${tag}` })).total).toBe(1);
      });
    });

    describe('names', () => {
      it("answers the names of records of every kind by id in one call, leaving out unknown ids and other tenants' users", async () => {
        const r = await refs();
        const cert = await s.certificates.create({
          ...r.base,
          name: `names ${r.tag}`,
          common_name: 'n.example.test',
        });
        const profile = await s.profiles.create({ name: `profile ${r.tag}`, max_validity_days: 90 });
        const rule = await s.policyRules.create({ name: `rule ${r.tag}`, type: 'AllowedIssuers' });
        const agent = await s.agents.create({
          name: `agent ${r.tag}`,
          hostname: 'h',
          os: 'linux',
          architecture: 'amd64',
          ip_address: '127.0.0.1',
          version: '1',
          api_key_hash: null,
        });
        const target = await s.targets.create({ agent_id: agent.id, name: `target ${r.tag}`, type: 'NGINX' });
        const hook = await s.webhooks.create({ name: `hook ${r.tag}`, url: 'https://hooks.example.test/n' });
        const scan = await s.scanTargets.create({
          name: `scan ${r.tag}`,
          cidrs: ['10.1.0.0/24'],
          hosts: [],
          ports: [443],
          sni_names: [],
          interval_seconds: 0,
          enabled: true,
          next_scan_at: null,
        });
        const check = await s.healthChecks.create({
          name: `check ${r.tag}`,
          host: '10.0.0.5',
          port: 443,
          sni: null,
          expected_fingerprint: null,
          certificate_id: null,
          interval_seconds: 60,
          deployment_window_seconds: 0,
          enabled: true,
          next_check_at: null,
        });
        const tenant = `tenant-${r.tag}`;
        const named = await s.users.create({
          tenant_id: tenant,
          subject: `sub-${r.tag}`,
          provider_id: null,
          display_name: `Alice ${r.tag}`,
          email: `alice-${r.tag}@example.test`,
        });
        const mailOnly = await s.users.create({
          tenant_id: tenant,
          subject: `mail-${r.tag}`,
          provider_id: null,
          email: `bob-${r.tag}@example.test`,
        });
        const bare = await s.users.create({ tenant_id: tenant, subject: `bare-${r.tag}`, provider_id: null });
        const elsewhere = await s.users.create({
          tenant_id: `other-${r.tag}`,
          subject: `x-${r.tag}`,
          provider_id: null,
          display_name: 'Mallory',
        });
        const cases = [
          ['certificate', cert.id, cert.name],
          ['issuer', r.issuer.id, r.issuer.name],
          ['owner', r.owner.id, r.owner.name],
          ['team', r.team.id, r.team.name],
          ['profile', profile.id, profile.name],
          ['renewal_policy', r.policy.id, r.policy.name],
          ['policy_rule', rule.id, rule.name],
          ['agent', agent.id, agent.name],
          ['target', target.id, target.name],
          ['webhook', hook.id, hook.name],
          ['scan_target', scan.id, scan.name],
          ['health_check', check.id, check.name],
        ] as const;
        for (const [kind, id, name] of cases) {
          const got = await s.names.namesOf(kind, [id, id, 'missing-id'], tenant);
          expect(Object.fromEntries(got), kind).toEqual({ [id]: name });
        }
        const users = await s.names.namesOf('user', [named.id, mailOnly.id, bare.id, elsewhere.id], tenant);
        expect(Object.fromEntries(users)).toEqual({
          [named.id]: `Alice ${r.tag}`,
          [mailOnly.id]: `bob-${r.tag}@example.test`,
          [bare.id]: `bare-${r.tag}`,
        });
        expect((await s.names.namesOf('owner', [], tenant)).size).toBe(0);
      });
    });

    describe('SCEP RA', () => {
      const ra = (profile_id: string, fp: string, previous: string | null = null) => ({
        profile_id,
        issuer_id: 'iss-ra',
        certificate_pem: `-----BEGIN CERTIFICATE-----\n${fp}\n-----END CERTIFICATE-----\n`,
        fingerprint_sha256: fp.padEnd(64, '0'),
        private_key_pem: `key-${fp}`,
        not_before: new Date('2026-01-01T00:00:00.000Z'),
        not_after: new Date('2027-01-01T00:00:00.000Z'),
        previous_certificate_pem: previous,
        previous_private_key_pem: previous === null ? null : `key-${previous}`,
      });

      it('creates once, rotates only from the RA in force, seals the keys and goes with its profile', async () => {
        const tag = randomUUID().slice(0, 8);
        const profile = await s.profiles.create({ name: `scep ${tag}`, max_validity_days: 90 });
        expect(await s.scepRa.get(profile.id)).toBeNull();
        const first = await s.scepRa.replace(ra(profile.id, 'aa'), null);
        expect(first).toMatchObject({ fingerprint_sha256: 'aa'.padEnd(64, '0'), private_key_pem: 'key-aa' });
        expect(first.not_after.toISOString()).toBe('2027-01-01T00:00:00.000Z');
        // A second creator loses to the first; a rotation from a stale RA changes nothing.
        expect((await s.scepRa.replace(ra(profile.id, 'bb'), null)).private_key_pem).toBe('key-aa');
        expect((await s.scepRa.replace(ra(profile.id, 'cc'), 'ff'.padEnd(64, '0'))).private_key_pem).toBe(
          'key-aa',
        );
        const rotated = await s.scepRa.replace(ra(profile.id, 'dd', 'aa'), 'aa'.padEnd(64, '0'));
        expect(rotated).toMatchObject({ private_key_pem: 'key-dd', previous_private_key_pem: 'key-aa' });
        expect(await s.scepRa.get(profile.id)).toMatchObject({ previous_certificate_pem: 'aa' });
        await s.profiles.delete(profile.id);
        expect(await s.scepRa.get(profile.id)).toBeNull();
      });
    });

    describe('certificates and versions', () => {
      it('creates a certificate with its first version in one write, as create + versions.create store them, all or nothing', async () => {
        const r = await refs();
        const notAfter = new Date(Date.now() + 30 * DAY);
        const { certificate_id: _, ...first } = versionInput('unused', r.issuer.id, notAfter, `1f${r.tag}`);
        const stored = await s.versions.createWithCertificate(
          {
            ...r.base,
            name: `first-${r.tag}`,
            common_name: `first-${r.tag}.example.test`,
            sans: [`first-${r.tag}.example.test`],
            status: 'Active',
            source: 'EST',
            metadata: { origin: 'contract' },
          },
          { ...first, private_key_pem: 'not a real key, but sealed all the same' },
        );
        expect(stored.certificate).toMatchObject({
          status: 'Active',
          current_version_id: stored.version.id,
          expires_at: notAfter,
          updated_at: stored.certificate.created_at,
        });
        expect(stored.version.certificate_id).toBe(stored.certificate.id);
        expect(stored.version.created_at).toEqual(stored.certificate.created_at);
        // What it returns is what is stored.
        expect(await s.certificates.get(stored.certificate.id)).toEqual(stored.certificate);
        expect(await s.versions.get(stored.version.id)).toEqual(stored.version);
        expect((await s.versions.getWithKey(stored.version.id))?.private_key_pem).toBe(
          'not a real key, but sealed all the same',
        );
        expect((await s.certificates.list({ search: `first-${r.tag}` })).total).toBe(1);

        // A taken (issuer, serial) stores neither the certificate nor the version.
        const name = `second-${r.tag}`;
        expect(
          await codeOf(
            s.versions.createWithCertificate({ ...r.base, name, common_name: `${name}.example.test` }, first),
          ),
        ).toBe('conflict');
        expect((await s.certificates.list({ search: name })).total).toBe(0);
      });

      it('finds a certificate by the serial number of any of its versions, padded or not (serial filter)', async () => {
        const r = await refs();
        const cert = await s.certificates.create({
          ...r.base,
          name: `serial-${r.tag}`,
          common_name: `serial-${r.tag}.example.test`,
        });
        const notAfter = new Date(Date.now() + 30 * DAY);
        // The tag is hex (a UUID's first 8 digits); one serial stored with DER zero padding.
        await s.versions.create(versionInput(cert.id, r.issuer.id, notAfter, `00ab${r.tag}`));
        await s.versions.create(versionInput(cert.id, r.issuer.id, notAfter, `cd${r.tag}`));
        const found = async (serial: string) =>
          (await s.certificates.list({ serial })).items.map((c) => c.id);
        expect(await found(`ab${r.tag}`)).toEqual([cert.id]);
        expect(await found(`cd${r.tag}`)).toEqual([cert.id]);
        expect(await found(`ef${r.tag}`)).toEqual([]);
        expect(await s.certificates.count({ serial: `ab${r.tag}`, issuer_id: r.issuer.id })).toEqual({
          total: 1,
          estimated: false,
        });
        expect(await s.certificates.count({ serial: `ab${r.tag}`, status: 'Revoked' })).toEqual({
          total: 0,
          estimated: false,
        });
      });

      it('inside a transaction, certificates created with their first version are seen by every later call, stored in order, and a taken serial fails the transaction', async () => {
        const r = await refs();
        const notAfter = new Date(Date.now() + 30 * DAY);
        const first = (n: number) => {
          const { certificate_id: _, ...v } = versionInput('unused', r.issuer.id, notAfter, `${n}e${r.tag}`);
          return v;
        };
        const newCert = (n: number) => ({
          ...r.base,
          name: `tx-${n}-${r.tag}`,
          common_name: `tx${n}.example.test`,
        });
        const rule = await s.policyRules.create({ name: `rule ${r.tag}`, type: 'AllowedIssuers' });
        const stored = await s.transaction(async (tx) => {
          const a = await tx.versions.createWithCertificate(newCert(1), first(1));
          const b = await tx.versions.createWithCertificate(newCert(2), first(2));
          // Reads, updates and streams all see them; a violation of a new certificate is stored.
          expect(await tx.certificates.get(a.certificate.id)).toEqual(a.certificate);
          await tx.violations.create({
            rule_id: rule.id,
            rule_type: rule.type,
            certificate_id: b.certificate.id,
            severity: rule.severity,
            message: 'refers to a certificate of this transaction',
          });
          const c = await tx.versions.createWithCertificate(newCert(3), first(3));
          await tx.certificates.update(c.certificate.id, { tags: ['updated'] });
          expect((await tx.versions.findBySerial(r.issuer.id, `3e${r.tag}`))?.id).toBe(c.version.id);
          const d = await tx.versions.createWithCertificate(newCert(4), first(4));
          const revoked: string[] = [];
          for await (const v of tx.versions.streamRevoked(r.issuer.id)) revoked.push(v.id);
          expect(revoked).toEqual([]);
          expect(await tx.versions.get(d.version.id)).toEqual(d.version);
          const e = await tx.versions.createWithCertificate(newCert(5), first(5));
          // A transaction joined on tx sees what waits too.
          expect(await tx.transaction((inner) => inner.versions.get(e.version.id))).toEqual(e.version);
          return [a, b, c, d, await tx.versions.createWithCertificate(newCert(6), first(6))];
        });
        for (const { certificate, version } of stored) {
          expect((await s.certificates.get(certificate.id))?.current_version_id).toBe(version.id);
          expect(await s.versions.get(version.id)).toEqual(version);
        }
        expect((await s.violations.list({ certificate_id: stored[1]!.certificate.id })).total).toBe(1);
        expect((await s.certificates.get(stored[2]!.certificate.id))?.tags).toEqual(['updated']);

        // A taken serial fails no later than the commit, and nothing of the transaction is stored.
        const name = `taken-${r.tag}`;
        expect(
          await codeOf(
            s.transaction(async (tx) => {
              await tx.versions.createWithCertificate({ ...newCert(7), name: `${name}-a` }, first(7));
              await tx.versions.createWithCertificate({ ...newCert(8), name: `${name}-b` }, first(1));
            }),
          ),
        ).toBe('conflict');
        expect((await s.certificates.list({ search: name })).total).toBe(0);
        expect(await s.versions.findBySerial(r.issuer.id, `7e${r.tag}`)).toBeNull();
      });

      it('lists with every filter, search over SANs, sorting and paging', async () => {
        const r = await refs();
        const r2 = await refs();
        const profile = await s.profiles.create({
          name: `profile ${r.tag}`,
          max_validity_days: 90,
          key_generation: 'agent',
        });
        const make = (name: string, extra: Partial<Parameters<Storage['certificates']['create']>[0]> = {}) =>
          s.certificates.create({ ...r.base, name, common_name: `${name}.example.test`, ...extra });
        const a = await make(`alpha-${r.tag}`, {
          status: 'Active',
          source: 'API',
          sans: [`api-${r.tag}.internal`],
        });
        const b = await make(`bravo-${r.tag}`, { status: 'Expiring', profile_id: profile.id });
        const c = await s.certificates.create({
          ...r2.base,
          owner_id: r.owner.id,
          name: `charlie-${r.tag}`,
          common_name: 'c.test',
          status: 'Active',
          source: 'EST',
        });
        const now = Date.now();
        await s.versions.create(versionInput(a.id, r.issuer.id, new Date(now + 10 * DAY), '0a'));
        await s.versions.create(versionInput(b.id, r.issuer.id, new Date(now + 40 * DAY), '0b'));
        await s.versions.create(versionInput(c.id, r2.issuer.id, new Date(now + 100 * DAY), '0c'));

        const ids = async (q: Parameters<Storage['certificates']['list']>[0]) =>
          (await s.certificates.list(q)).items.map((x) => x.id);
        expect(await ids({ issuer_id: r.issuer.id, sort: 'name' })).toEqual([a.id, b.id]);
        expect(await ids({ owner_id: r.owner.id, sort: 'name' })).toEqual([a.id, b.id, c.id]);
        expect(await ids({ team_id: r2.team.id })).toEqual([c.id]);
        expect(await ids({ profile_id: profile.id })).toEqual([b.id]);
        expect(await ids({ owner_id: r.owner.id, status: 'Active', sort: 'name' })).toEqual([a.id, c.id]);
        expect(await ids({ owner_id: r.owner.id, status: ['Expiring', 'Pending'] })).toEqual([b.id]);
        expect(await ids({ owner_id: r.owner.id, source: '' })).toEqual([b.id]);
        expect(await ids({ owner_id: r.owner.id, source: 'EST' })).toEqual([c.id]);
        expect(await ids({ search: `API-${r.tag}.INTERNAL` })).toEqual([a.id]);
        expect(await ids({ search: `charlie-${r.tag}` })).toEqual([c.id]);
        expect(await ids({ search: '%', owner_id: r.owner.id })).toEqual([]);
        expect(await ids({ owner_id: r.owner.id, expiresBefore: new Date(now + 30 * DAY) })).toEqual([a.id]);
        expect(
          await ids({ owner_id: r.owner.id, expiresAfter: new Date(now + 30 * DAY), sort: 'expires_at' }),
        ).toEqual([b.id, c.id]);
        expect(await ids({ owner_id: r.owner.id, sort: 'expires_at', order: 'desc' })).toEqual([
          c.id,
          b.id,
          a.id,
        ]);

        const page1 = await s.certificates.list({ owner_id: r.owner.id, sort: 'name', perPage: 2, page: 1 });
        const page2 = await s.certificates.list({ owner_id: r.owner.id, sort: 'name', perPage: 2, page: 2 });
        expect(page1.total).toBe(3);
        expect([...page1.items, ...page2.items].map((x) => x.id)).toEqual([a.id, b.id, c.id]);

        expect(await s.certificates.listIds({ owner_id: r.owner.id }, { limit: 2 })).toHaveLength(2);
        const [first] = await s.certificates.listIds({ owner_id: r.owner.id }, { limit: 1 });
        expect(
          await s.certificates.listIds({ owner_id: r.owner.id }, { limit: 10, afterId: first }),
        ).toHaveLength(2);
      });

      it('pages by keyset exactly as by offset, for every sort and order, and bounds the exact total', async () => {
        const r = await refs();
        const at = new Date('2026-03-01T00:00:00.000Z');
        const statuses = ['Active', 'Active', 'Pending', 'Expiring', 'Active', 'Failed', 'Pending'] as const;
        const made: string[] = [];
        for (let i = 0; i < 7; i++) {
          // Ties on every sort column: two creation instants, repeated statuses and names, and
          // certificates without a version (expires_at null) among those with one.
          const cert = await s.certificates.create({
            ...r.base,
            name: `keyset-${r.tag}-${i % 3}`,
            common_name: `k${i % 2}.${r.tag}.test`,
            status: statuses[i],
            created_at: new Date(at.getTime() + (i % 2) * 1000),
          });
          if (i % 3 !== 0)
            await s.versions.create(
              versionInput(cert.id, r.issuer.id, new Date(at.getTime() + (i % 4) * DAY), `7${i}`),
            );
          made.push(cert.id);
        }
        for (const sort of [
          'name',
          'common_name',
          'status',
          'expires_at',
          'created_at',
          'updated_at',
        ] as const) {
          for (const order of ['asc', 'desc'] as const) {
            const q = { owner_id: r.owner.id, sort, order };
            const all = (await s.certificates.list({ ...q, perPage: 100 })).items.map((x) => x.id);
            expect(all).toHaveLength(7);
            const walked: string[] = [];
            let after: CertificateListKey | undefined;
            for (let n = 0; n < 10; n++) {
              const page = await s.certificates.list({ ...q, perPage: 2, after });
              walked.push(...page.items.map((x) => x.id));
              expect(page.totalEstimated).toBe(false);
              expect(page.total).toBe(7);
              if (!page.next) break;
              expect(page.next.id).toBe(page.items[page.items.length - 1]?.id);
              after = page.next;
            }
            expect({ sort, order, ids: walked }).toEqual({ sort, order, ids: all });
          }
        }
        // Exact up to the limit; beyond it an estimate (never below limit + 1), flagged.
        const exact = await s.certificates.list({ owner_id: r.owner.id, perPage: 1, exactTotalLimit: 7 });
        expect(exact).toMatchObject({ total: 7, totalEstimated: false });
        const estimated = await s.certificates.list({ owner_id: r.owner.id, perPage: 1, exactTotalLimit: 3 });
        expect(estimated.totalEstimated).toBe(true);
        expect(estimated.total).toBeGreaterThanOrEqual(4);
        expect(estimated.items).toHaveLength(1);
        const last = await s.certificates.list({
          owner_id: r.owner.id,
          perPage: 5,
          page: 2,
          exactTotalLimit: 3,
        });
        expect(last).toMatchObject({ total: 7, totalEstimated: false, next: null });
        expect(last.items).toHaveLength(2);
        expect(await s.certificates.list({ owner_id: r.owner.id, perPage: 5, page: 3 })).toMatchObject({
          items: [],
          total: 7,
          next: null,
        });
        expect(await s.certificates.count({ owner_id: r.owner.id })).toEqual({ total: 7, estimated: false });
        expect(
          await s.certificates.count({ owner_id: r.owner.id, status: 'Pending' }, { exactLimit: 2 }),
        ).toEqual({
          total: 2,
          estimated: false,
        });
        const counted = await s.certificates.count({ owner_id: r.owner.id }, { exactLimit: 3 });
        expect(counted.estimated).toBe(true);
        expect(counted.total).toBeGreaterThanOrEqual(4);
        // Many counts at once answer what count answers for each.
        expect(
          await s.certificates.countEach(
            [{ owner_id: r.owner.id, status: 'Pending' }, { owner_id: r.owner.id }, { status: [] }],
            { exactLimit: 3 },
          ),
        ).toEqual([
          { total: 2, estimated: false },
          { total: expect.any(Number), estimated: true },
          { total: 0, estimated: false },
        ]);
        expect(
          (await s.certificates.countEach([{ owner_id: r.owner.id }], { exactLimit: 3 }))[0]?.total,
        ).toBeGreaterThanOrEqual(4);
        expect(await s.certificates.countEach([], { exactLimit: 3 })).toEqual([]);

        // A search counts its matches before reading the page, and reads it from them (by id
        // within the exact limit, all matches sorted beyond it): the rows, order and totals are
        // those of any other filter, by keyset and by offset.
        for (const cap of [1000, 3]) {
          for (const sort of ['name', 'status', 'expires_at', 'created_at'] as const) {
            for (const order of ['asc', 'desc'] as const) {
              const q = { search: `KEYSET-${r.tag}-`, sort, order, exactTotalLimit: cap };
              const all = (
                await s.certificates.list({ owner_id: r.owner.id, sort, order, perPage: 100 })
              ).items.map((x) => x.id);
              const walked: string[] = [];
              const offsets: string[] = [];
              let after: CertificateListKey | undefined;
              for (let n = 0; n < 10; n++) {
                const page = await s.certificates.list({ ...q, perPage: 2, after });
                const byOffset = await s.certificates.list({ ...q, perPage: 2, page: n + 1 });
                walked.push(...page.items.map((x) => x.id));
                offsets.push(...byOffset.items.map((x) => x.id));
                if (page.next) {
                  expect(page.totalEstimated).toBe(cap < 7);
                  if (cap < 7) expect(page.total).toBeGreaterThan(cap);
                  else expect(page.total).toBe(7);
                }
                if (!page.next) break;
                after = page.next;
              }
              expect({ cap, sort, order, ids: walked }).toEqual({ cap, sort, order, ids: all });
              expect({ cap, sort, order, ids: offsets }).toEqual({ cap, sort, order, ids: all });
            }
          }
        }
        expect(
          await s.certificates.list({
            search: `keyset-${r.tag}-`,
            owner_id: r.owner.id,
            status: 'Failed',
            exactTotalLimit: 3,
          }),
        ).toMatchObject({ total: 1, totalEstimated: false, next: null });
        expect(await s.certificates.list({ search: `nothing-${r.tag}`, exactTotalLimit: 3 })).toMatchObject({
          items: [],
          total: 0,
          totalEstimated: false,
          next: null,
        });
        expect(made).toHaveLength(7);
      });

      it('estimates totals past the cap for filters of every kind, text with quotes and backslashes among them', async () => {
        const r = await refs();
        const odd = `it's \\ ${r.tag}`;
        const now = Date.now();
        for (let i = 0; i < 3; i++) {
          const cert = await s.certificates.create({
            ...r.base,
            name: `${odd} ${i}`,
            common_name: `q${i}.${r.tag}.test`,
            status: 'Active',
          });
          await s.versions.create(versionInput(cert.id, r.issuer.id, new Date(now + (i + 1) * DAY), `5${i}`));
        }
        const filters = [
          { owner_id: r.owner.id, search: odd },
          { owner_id: r.owner.id, status: ['Active', 'Expiring'] as CertificateStatus[] },
          { owner_id: r.owner.id, expiresAfter: new Date(now), expiresBefore: new Date(now + 10 * DAY) },
        ];
        for (const filter of filters) {
          // Past the cap: an estimate, never below cap + 1, flagged — by count, countEach and a
          // list page, whose total comes with the page.
          const counted = await s.certificates.count(filter, { exactLimit: 1 });
          expect({ filter, estimated: counted.estimated }).toEqual({ filter, estimated: true });
          expect(counted.total).toBeGreaterThanOrEqual(2);
          const [each] = await s.certificates.countEach([filter], { exactLimit: 1 });
          expect(each?.estimated).toBe(true);
          expect(each?.total).toBeGreaterThanOrEqual(2);
          const page = await s.certificates.list({ ...filter, perPage: 1, exactTotalLimit: 1 });
          expect(page.items).toHaveLength(1);
          expect(page.totalEstimated).toBe(true);
          expect(page.total).toBeGreaterThanOrEqual(2);
          // Within the cap: exact, for the first page and for the page after its key.
          const exact = await s.certificates.list({ ...filter, perPage: 1, exactTotalLimit: 3 });
          expect(exact).toMatchObject({ total: 3, totalEstimated: false });
          const second = await s.certificates.list({
            ...filter,
            perPage: 1,
            exactTotalLimit: 3,
            after: exact.next ?? undefined,
          });
          expect(second).toMatchObject({ total: 3, totalEstimated: false });
          expect(second.items[0]?.id).not.toBe(exact.items[0]?.id);
        }
      });

      it('keeps the latest version on the certificate, and the private key sealed', async () => {
        const r = await refs();
        const cert = await s.certificates.create({
          ...r.base,
          name: 'v',
          common_name: 'v.test',
          metadata: { env: 'prod' },
          tags: ['a'],
        });
        expect(cert).toMatchObject({
          status: 'Pending',
          source: '',
          sans: [],
          profile_id: null,
          current_version_id: null,
          expires_at: null,
        });
        const notAfter = new Date(Date.UTC(2030, 0, 1, 12, 0, 0, 123));
        const v1 = await s.versions.create({
          ...versionInput(cert.id, r.issuer.id, notAfter, 'ABCD01'),
          private_key_pem: 'PRIVATE-KEY-PEM',
        });
        expect(v1.serial_number).toBe('abcd01');
        const stored = await s.certificates.require(cert.id);
        expect(stored.current_version_id).toBe(v1.id);
        expect(stored.expires_at?.toISOString()).toBe(notAfter.toISOString());
        expect(stored.metadata).toEqual({ env: 'prod' });
        expect(JSON.stringify(await s.versions.get(v1.id))).not.toContain('PRIVATE-KEY-PEM');
        expect((await s.versions.getWithKey(v1.id))?.private_key_pem).toBe('PRIVATE-KEY-PEM');
        expect(await codeOf(s.versions.create(versionInput(cert.id, r.issuer.id, notAfter, 'abcd01')))).toBe(
          'conflict',
        );
        const v2 = await s.versions.create(
          versionInput(cert.id, r.issuer.id, new Date(notAfter.getTime() + DAY), 'abcd02'),
        );
        expect((await s.versions.latest(cert.id))?.id).toBe(v2.id);
        expect([await s.versions.hasPrivateKey(v1.id), await s.versions.hasPrivateKey(v2.id)]).toEqual([
          true,
          false,
        ]);
        expect(await s.versions.hasPrivateKey('cv-missing')).toBe(false);
        expect((await s.versions.listForCertificate(cert.id)).total).toBe(2);
        expect((await s.versions.findBySerial(r.issuer.id, 'ABCD01'))?.id).toBe(v1.id);
        expect(
          await codeOf(s.versions.create(versionInput('mc-missing', r.issuer.id, notAfter, 'ff'))),
        ).toMatch(/invalid_reference|not_found/);
      });

      it('revokes once, keeps the first reason, and streams an issuer revocations page by page', async () => {
        const r = await refs();
        const cert = await s.certificates.create({ ...r.base, name: 'rev', common_name: 'rev.test' });
        const versions: CertificateVersion[] = [];
        for (let i = 0; i < 7; i++)
          versions.push(
            await s.versions.create(
              versionInput(cert.id, r.issuer.id, new Date(Date.now() + DAY), hex(i + 1)),
            ),
          );
        const at = new Date(Date.UTC(2026, 1, 1));
        const first = await s.versions.revoke(versions[0]!.id, {
          revoked_at: at,
          reason: 'keyCompromise',
          invalidity_date: at,
        });
        expect(first).toMatchObject({ revocation_reason: 'keyCompromise' });
        const again = await s.versions.revoke(versions[0]!.id, {
          revoked_at: new Date(),
          reason: 'superseded',
        });
        expect(again.revocation_reason).toBe('keyCompromise');
        expect(again.revoked_at?.toISOString()).toBe(at.toISOString());
        expect(
          await s.versions.revokeForCertificates([cert.id], {
            revoked_at: at,
            reason: 'cessationOfOperation',
          }),
        ).toBe(6);
        const seen: string[] = [];
        for await (const v of s.versions.streamRevoked(r.issuer.id, 3)) seen.push(v.serial_number);
        expect(seen).toEqual(['01', '02', '03', '04', '05', '06', '07']);
        const pages: number[] = [];
        const entries: RevokedEntry[] = [];
        for await (const page of s.versions.streamRevokedEntries(r.issuer.id, 3)) {
          pages.push(page.length);
          entries.push(...page);
        }
        expect(pages).toEqual([3, 3, 1]);
        expect(entries.map((e) => e.serial_number)).toEqual(['01', '02', '03', '04', '05', '06', '07']);
        expect(Object.keys(entries[0]!).sort()).toEqual([
          'invalidity_date',
          'revocation_reason',
          'revoked_at',
          'serial_number',
        ]);
        const firstEntry = entries.find((e) => e.serial_number === versions[0]!.serial_number)!;
        expect(firstEntry.revocation_reason).toBe('keyCompromise');
        expect(firstEntry.revoked_at.toISOString()).toBe(at.toISOString());
        expect(firstEntry.invalidity_date?.toISOString()).toBe(at.toISOString());
        expect(entries.filter((e) => e.revocation_reason === 'cessationOfOperation')).toHaveLength(6);
        expect(
          await codeOf(
            (async () => {
              for await (const _ of s.versions.streamRevokedEntries(r.issuer.id, 0)) void _;
            })(),
          ),
        ).toBe('bad_request');
      });

      it('streams only the versions revoked since a time when asked (a delta CRL read)', async () => {
        const r = await refs();
        const cert = await s.certificates.create({ ...r.base, name: 'delta', common_name: 'delta.test' });
        const versions: CertificateVersion[] = [];
        for (let i = 0; i < 4; i++)
          versions.push(
            await s.versions.create(
              versionInput(cert.id, r.issuer.id, new Date(Date.now() + DAY), hex(i + 0x40)),
            ),
          );
        const base = Date.UTC(2026, 2, 1);
        // Before the cut, exactly at it, after it; the fourth stays valid.
        for (const [i, offset] of [-1000, 0, 5000].entries())
          await s.versions.revoke(versions[i]!.id, {
            revoked_at: new Date(base + offset),
            reason: 'superseded',
          });
        const since = async (at: Date, pageSize?: number) => {
          const out: string[] = [];
          for await (const page of s.versions.streamRevokedEntries(r.issuer.id, pageSize, {
            revokedSince: at,
          }))
            out.push(...page.map((e) => e.serial_number));
          return out;
        };
        expect(await since(new Date(base))).toEqual([hex(0x41), hex(0x42)]);
        expect(await since(new Date(base), 1)).toEqual([hex(0x41), hex(0x42)]);
        expect(await since(new Date(base + 6000))).toEqual([]);
      });

      it("lists each revoked version's CRL entry as stored DER, the bytes its columns encode to", async () => {
        const r = await refs();
        const cert = await s.certificates.create({ ...r.base, name: 'crl-der', common_name: 'crl-der.test' });
        // A 20-octet serial with the high bit set (21 content octets), and short ones.
        const serials = ['ff'.repeat(20), '01', '7f', '80', '0a0b0c'];
        const versions: CertificateVersion[] = [];
        for (const serial of serials)
          versions.push(
            await s.versions.create(versionInput(cert.id, r.issuer.id, new Date(Date.now() + DAY), serial)),
          );
        const splitEntries = (blocks: Uint8Array[]) =>
          blocks.flatMap((b) => {
            const out: string[] = [];
            for (let off = 0; off < b.length; off += 2 + b[off + 1]!)
              out.push(Buffer.from(b.subarray(off, off + 2 + b[off + 1]!)).toString('hex'));
            return out;
          });
        const read = async (pageSize?: number) => {
          const blocks: Uint8Array[] = [];
          for await (const b of s.versions.streamCrlEntryBlocks(r.issuer.id, pageSize)) blocks.push(b);
          return blocks;
        };
        const expected = async () => {
          const want: string[] = [];
          for await (const page of s.versions.streamRevokedEntries(r.issuer.id))
            for (const e of page)
              want.push(
                encodeCrlEntry({
                  serial: e.serial_number,
                  revokedAt: e.revoked_at,
                  reason: (e.revocation_reason ?? undefined) as CrlEntry['reason'],
                  invalidityDate: e.invalidity_date ?? undefined,
                }).toString('hex'),
              );
          return want.sort();
        };
        expect(await read()).toEqual([]);
        await s.versions.revoke(versions[0]!.id, {
          revoked_at: new Date(Date.UTC(2026, 2, 1, 10, 0, 0)),
          reason: 'keyCompromise',
          invalidity_date: new Date(Date.UTC(2051, 0, 1)),
        });
        await s.versions.revoke(versions[1]!.id, {
          revoked_at: new Date(Date.UTC(2026, 2, 2)),
          reason: 'unspecified',
        });
        await s.versions.revoke(versions[2]!.id, {
          revoked_at: new Date(Date.UTC(2049, 11, 31, 23, 59, 59)),
          reason: 'superseded',
        });
        const first = await read(2);
        expect(first.map((b) => splitEntries([b]).length)).toEqual([2, 1]);
        expect(splitEntries(first).sort()).toEqual(await expected());
        // Read again: now from the stored bytes, and the same.
        expect(splitEntries(await read(2)).sort()).toEqual(splitEntries(first).sort());
        // Later revocations join the list on the next read.
        await s.versions.revokeForCertificates([cert.id], {
          revoked_at: new Date(Date.UTC(2026, 3, 1)),
          reason: 'cessationOfOperation',
        });
        const all = splitEntries(await read());
        expect(all).toHaveLength(serials.length);
        expect(all.sort()).toEqual(await expected());
        expect(
          await codeOf(
            (async () => {
              for await (const _ of s.versions.streamCrlEntryBlocks(r.issuer.id, 0)) void _;
            })(),
          ),
        ).toBe('bad_request');
      });

      it('finds certificates whose renewal window opened, per policy window', async () => {
        const r = await refs();
        const wide = await s.renewalPolicies.create({ name: `wide ${r.tag}`, renewal_window_days: 60 });
        const now = new Date(Date.UTC(2031, 5, 1));
        const mk = async (
          name: string,
          days: number,
          policy: string,
          status: CertificateStatus = 'Active',
        ) => {
          const c = await s.certificates.create({
            ...r.base,
            renewal_policy_id: policy,
            name,
            common_name: `${name}.test`,
            status,
          });
          await s.versions.create(
            versionInput(
              c.id,
              r.issuer.id,
              new Date(now.getTime() + days * DAY),
              randomUUID().replace(/-/g, '').slice(0, 16),
            ),
          );
          return c.id;
        };
        const due20 = await mk('due20', 20, r.policy.id);
        await mk('notdue40', 40, r.policy.id);
        const due40wide = await mk('due40wide', 40, wide.id);
        await mk('inprogress', 5, r.policy.id, 'RenewalInProgress');
        const due = (await s.certificates.renewalDue({ now, limit: 1000 }))
          .filter((c) => c.owner_id === r.owner.id)
          .map((c) => c.id);
        expect(due).toEqual([due20, due40wide]);
      });

      it('applies bulk patches, counts by status and cascades versions on delete', async () => {
        const r = await refs();
        const owner2 = await s.owners.create({ name: 'new owner' });
        const ids = [];
        for (let i = 0; i < 3; i++)
          ids.push(
            (
              await s.certificates.create({
                ...r.base,
                name: `bulk${i}`,
                common_name: 'b.test',
                status: 'Active',
              })
            ).id,
          );
        expect(
          await s.certificates.updateMany(ids, { owner_id: owner2.id, status: 'RenewalInProgress' }),
        ).toBe(3);
        expect((await s.certificates.list({ owner_id: owner2.id })).total).toBe(3);
        expect((await s.certificates.countByStatus()).RenewalInProgress).toBeGreaterThanOrEqual(3);
        expect(await codeOf(s.certificates.updateMany(ids, { team_id: 'team-missing' }))).toBe(
          'invalid_reference',
        );
        const v = await s.versions.create(
          versionInput(ids[0]!, r.issuer.id, new Date(Date.now() + DAY), 'dd01'),
        );
        await s.certificates.delete(ids[0]!);
        expect(await s.versions.get(v.id)).toBeNull();
      });

      it('updates fields and keeps search in step with the new names', async () => {
        const r = await refs();
        const c = await s.certificates.create({ ...r.base, name: `old-${r.tag}`, common_name: 'old.test' });
        const u = await s.certificates.update(c.id, {
          name: `new-${r.tag}`,
          sans: [`san-${r.tag}.test`],
          environment: 'prod',
        });
        expect(u).toMatchObject({ name: `new-${r.tag}`, environment: 'prod', sans: [`san-${r.tag}.test`] });
        expect((await s.certificates.list({ search: `old-${r.tag}` })).total).toBe(0);
        expect((await s.certificates.list({ search: `san-${r.tag}` })).items.map((x) => x.id)).toEqual([
          c.id,
        ]);
      });
    });

    describe('secrets at rest', () => {
      it('never returns issuer, target or webhook secrets from ordinary reads', async () => {
        const r = await refs();
        const got = await s.issuers.require(r.issuer.id);
        expect(JSON.stringify(got)).not.toContain('secret-');
        expect(JSON.stringify(await s.issuers.list({ perPage: 500 }))).not.toContain('secret-');
        expect((await s.issuers.getWithConfig(r.issuer.id))?.config).toEqual({ token: `secret-${r.tag}` });
        await s.issuers.update(r.issuer.id, { config: { token: 'rotated' } });
        expect((await s.issuers.getWithConfig(r.issuer.id))?.config).toEqual({ token: 'rotated' });

        const agent = await s.agents.create({
          name: 'a',
          hostname: 'h',
          os: 'linux',
          architecture: 'amd64',
          ip_address: '127.0.0.1',
          version: '1',
          api_key_hash: null,
        });
        const target = await s.targets.create({
          agent_id: agent.id,
          name: 't',
          type: 'NGINX',
          config: { password: 'tg-secret' },
        });
        expect(JSON.stringify(await s.targets.require(target.id))).not.toContain('tg-secret');
        expect((await s.targets.getWithConfig(target.id))?.config).toEqual({ password: 'tg-secret' });

        const hook = await s.webhooks.create({
          name: 'w',
          url: 'https://hooks.example.test/x/url-token?key=url-key',
          headers: { Authorization: 'Bearer wh-secret' },
        });
        expect(hook).toMatchObject({
          url_masked: 'https://hooks.example.test/********',
          method: 'POST',
          service: 'generic',
          enabled: true,
          header_names: ['Authorization'],
        });
        const shown = JSON.stringify([
          await s.webhooks.require(hook.id),
          (await s.webhooks.list({ perPage: 500 })).items,
        ]);
        for (const secret of ['wh-secret', 'url-token', 'url-key']) expect(shown).not.toContain(secret);
        expect(await s.webhooks.getWithHeaders(hook.id)).toMatchObject({
          url: 'https://hooks.example.test/x/url-token?key=url-key',
          headers: { Authorization: 'Bearer wh-secret' },
        });
        const moved = await s.webhooks.update(hook.id, { url: 'https://other.example.test/' });
        expect(moved.url_masked).toBe('https://other.example.test/');
        expect((await s.webhooks.getWithHeaders(hook.id))?.url).toBe('https://other.example.test/');
      });

      it('keeps a webhook’s notification types and per-kind options, and updates only what it is given', async () => {
        const hook = await s.webhooks.create({
          name: 'typed',
          url: 'https://api.telegram.test/botX/sendMessage',
          service: 'telegram',
          events: ['ExpirationWarning', 'Revocation'],
          options: { chat_id: '-100123', priority: 4 },
          headers: { 'X-Api-Key': 'k1' },
        });
        expect(hook).toMatchObject({
          events: ['ExpirationWarning', 'Revocation'],
          options: { chat_id: '-100123', priority: 4 },
        });
        const renamed = await s.webhooks.update(hook.id, { name: 'renamed' });
        expect(renamed).toMatchObject({
          name: 'renamed',
          events: ['ExpirationWarning', 'Revocation'],
          options: { chat_id: '-100123', priority: 4 },
        });
        expect((await s.webhooks.getWithHeaders(hook.id))?.headers).toEqual({ 'X-Api-Key': 'k1' });
        const changed = await s.webhooks.update(hook.id, { events: [], options: { topic: 'certs' } });
        expect(changed).toMatchObject({ events: [], options: { topic: 'certs' } });
        const plain = await s.webhooks.create({ name: 'plain', url: 'https://hooks.example.test/y' });
        expect(plain).toMatchObject({ events: [], options: {} });
        expect((await s.webhooks.list({ perPage: 500 })).items.find((w) => w.id === hook.id)?.events).toEqual(
          [],
        );
      });
    });

    describe('settings', () => {
      it('reads null for a setting never written, then the last value written', async () => {
        const name = `test.setting.${randomUUID()}`;
        expect(await s.settings.get(name)).toBeNull();
        await s.settings.put(name, '10.0.0.0/8');
        expect(await s.settings.get(name)).toBe('10.0.0.0/8');
        await s.settings.put(name, '');
        expect(await s.settings.get(name)).toBe('');
        await s.transaction(async (tx) => tx.settings.put(name, 'in a transaction'));
        expect(await s.settings.get(name)).toBe('in a transaction');
      });
    });

    describe('agents, targets and jobs', () => {
      it('looks agents up by key hash without ever returning the hash', async () => {
        const hash = randomUUID().replace(/-/g, '').repeat(2);
        const agent = await s.agents.create({
          name: 'a',
          hostname: 'h',
          os: 'linux',
          architecture: 'arm64',
          ip_address: '10.0.0.1',
          version: '2.0.0',
          api_key_hash: hash,
        });
        expect(agent).not.toHaveProperty('api_key_hash');
        expect((await s.agents.getByApiKeyHash(hash))?.id).toBe(agent.id);
        expect(JSON.stringify(await s.agents.list({ perPage: 500 }))).not.toContain(hash);
        expect(
          await codeOf(
            s.agents.create({
              name: 'b',
              hostname: 'h',
              os: '',
              architecture: '',
              ip_address: '',
              version: '',
              api_key_hash: hash,
            }),
          ),
        ).toBe('conflict');
      });

      it('counts agent dependencies and retires its targets with one timestamp', async () => {
        const r = await refs();
        const agent = await s.agents.create({
          name: 'dep',
          hostname: 'h',
          os: '',
          architecture: '',
          ip_address: '',
          version: '',
          api_key_hash: null,
        });
        const t1 = await s.targets.create({ agent_id: agent.id, name: 't1', type: 'NGINX' });
        const t2 = await s.targets.create({ agent_id: agent.id, name: 't2', type: 'Apache' });
        const c = await s.certificates.create({
          ...r.base,
          name: 'dep',
          common_name: 'dep.test',
          status: 'Active',
        });
        await s.certificates.setTargets(c.id, [t1.id, t2.id]);
        expect(await codeOf(s.certificates.setTargets(c.id, ['tg-missing']))).toBe('invalid_reference');
        expect(await s.certificates.listTargetIds(c.id)).toEqual([t1.id, t2.id].sort());
        expect((await s.certificates.list({ agent_id: agent.id })).items.map((x) => x.id)).toEqual([c.id]);
        await s.jobs.create({
          type: 'Deployment',
          certificate_id: c.id,
          target_id: t1.id,
          agent_id: agent.id,
        });
        await s.jobs.create({
          type: 'Deployment',
          certificate_id: c.id,
          target_id: t2.id,
          agent_id: agent.id,
          status: 'Completed',
        });
        expect(await s.agents.dependencyCounts(agent.id)).toEqual({
          active_targets: 2,
          active_certificates: 1,
          pending_jobs: 1,
        });
        expect((await s.jobs.listOpenForAgent(agent.id)).map((j) => j.target_id)).toEqual([t1.id]);

        const at = new Date(Date.UTC(2026, 2, 3, 4, 5, 6, 789));
        await s.transaction(async (tx) => {
          await tx.agents.update(agent.id, { retired_at: at, retired_reason: 'decommissioned' });
          expect(await tx.targets.retireForAgent(agent.id, at, 'decommissioned')).toBe(2);
        });
        const retired = await s.targets.list({ agent_id: agent.id, retired: true });
        expect(retired.items.map((t) => t.retired_at?.toISOString())).toEqual([
          at.toISOString(),
          at.toISOString(),
        ]);
        expect((await s.agents.list({ retired: true, perPage: 500 })).items.map((a) => a.id)).toContain(
          agent.id,
        );
        expect((await s.agents.dependencyCounts(agent.id)).active_targets).toBe(0);
        expect(await s.targets.listForCertificate(c.id)).toEqual([]);
      });

      it('hands each of 200 due jobs to exactly one of 20 concurrent claimers', async () => {
        const agent = await s.agents.create({
          name: 'claims',
          hostname: 'h',
          os: '',
          architecture: '',
          ip_address: '',
          version: '',
          api_key_hash: null,
        });
        const now = new Date();
        const created = new Set<string>();
        for (let i = 0; i < 200; i++)
          created.add(
            (
              await s.jobs.create({
                type: 'Validation',
                agent_id: agent.id,
                scheduled_at: new Date(now.getTime() - 1000),
              })
            ).id,
          );
        const claimed: string[] = [];
        await Promise.all(
          Array.from({ length: 20 }, async (_, w) => {
            for (;;) {
              const jobs = await s.jobs.claimDue({
                now,
                worker: `w${w}`,
                leaseMs: 60_000,
                limit: 7,
                agentId: agent.id,
              });
              if (jobs.length === 0) return;
              for (const j of jobs) {
                expect(j).toMatchObject({ status: 'Running', attempts: 1, locked_by: `w${w}` });
                claimed.push(j.id);
              }
            }
          }),
        );
        expect(claimed).toHaveLength(200);
        expect(new Set(claimed)).toEqual(created);
      });

      it('creates many jobs at once, each as create would store it, all or none', async () => {
        const agent = await s.agents.create({
          name: 'many',
          hostname: 'h',
          os: '',
          architecture: '',
          ip_address: '',
          version: '',
          api_key_hash: null,
        });
        const r = await refs();
        const cert = await s.certificates.create({ ...r.base, name: 'many', common_name: 'many.test' });
        const at = new Date(Date.UTC(2026, 4, 5, 6, 7, 8, 9));
        // Every field bulk renewal sets must arrive (an agent-mode renewal without its agent_id
        // or status is never offered to that agent).
        const detailed = {
          type: 'Renewal' as const,
          status: 'AwaitingCSR' as const,
          certificate_id: cert.id,
          agent_id: agent.id,
          max_attempts: 7,
          payload: { trigger: 'bulk_renew', n: [1, 2] },
          scheduled_at: at,
        };
        const jobs = await s.jobs.createMany([
          detailed,
          ...Array.from({ length: 1199 }, () => ({ type: 'Renewal' as const, agent_id: agent.id })),
        ]);
        expect(new Set(jobs.map((j) => j.id)).size).toBe(1200);
        expect((await s.jobs.list({ agent_id: agent.id })).total).toBe(1200);
        expect(jobs[0]).toMatchObject(detailed);
        expect(await s.jobs.require(jobs[0]!.id)).toEqual(jobs[0]);
        expect(await s.jobs.require(jobs[1199]!.id)).toEqual(jobs[1199]);
        expect((await s.jobs.listOpenForAgent(agent.id, 1)).map((j) => j.id)).toEqual([jobs[0]!.id]);
        expect(await s.jobs.createMany([])).toEqual([]);
        const bad = [
          { type: 'Renewal' as const, agent_id: agent.id },
          { type: 'Renewal' as const, agent_id: 'ag-missing' },
        ];
        expect(await codeOf(s.jobs.createMany(bad))).toBe('invalid_reference');
        expect((await s.jobs.list({ agent_id: agent.id })).total).toBe(1200);
      });

      it('counts jobs by status in one call, each as a list of that status counts them', async () => {
        const before = await s.jobs.countByStatus();
        const created = await s.jobs.createMany([
          { type: 'Renewal' as const },
          { type: 'Renewal' as const, status: 'AwaitingCSR' as const },
          { type: 'Renewal' as const, status: 'AwaitingCSR' as const },
        ]);
        await s.jobs.update(created[0]!.id, { status: 'Cancelled' });
        const after = await s.jobs.countByStatus();
        expect(Object.keys(after).sort()).toEqual([...JOB_STATUSES].sort());
        expect(after.AwaitingCSR - before.AwaitingCSR).toBe(2);
        expect(after.Cancelled - before.Cancelled).toBe(1);
        for (const status of JOB_STATUSES)
          expect({ status, n: after[status] }).toEqual({
            status,
            n: (await s.jobs.list({ status, perPage: 1 })).total,
          });
      });

      it('lists jobs finished at or after an instant (completed_after)', async () => {
        const [early, late, open] = await s.jobs.createMany([
          { type: 'Validation' as const },
          { type: 'Validation' as const },
          { type: 'Validation' as const },
        ]);
        const at = new Date('2031-03-01T00:00:00Z');
        await s.jobs.update(early!.id, { status: 'Failed', completed_at: new Date(at.getTime() - 1000) });
        await s.jobs.update(late!.id, { status: 'Failed', completed_at: at });
        const ids = (await s.jobs.list({ type: 'Validation', completed_after: at, perPage: 500 })).items.map(
          (j) => j.id,
        );
        expect(ids).toContain(late!.id);
        expect(ids).not.toContain(early!.id);
        expect(ids).not.toContain(open!.id);
      });

      it('re-claims a job whose lease expired and fails it once attempts are used up', async () => {
        const agent = await s.agents.create({
          name: 'lease',
          hostname: 'h',
          os: '',
          architecture: '',
          ip_address: '',
          version: '',
          api_key_hash: null,
        });
        const t0 = new Date(Date.UTC(2026, 0, 1));
        const job = await s.jobs.create({
          type: 'Renewal',
          agent_id: agent.id,
          max_attempts: 2,
          scheduled_at: t0,
        });
        expect(
          await s.jobs.claimDue({ now: t0, worker: 'a', leaseMs: 1000, limit: 5, agentId: agent.id }),
        ).toHaveLength(1);
        expect(
          await s.jobs.claimDue({
            now: new Date(t0.getTime() + 500),
            worker: 'b',
            leaseMs: 1000,
            limit: 5,
            agentId: agent.id,
          }),
        ).toHaveLength(0);
        const second = await s.jobs.claimDue({
          now: new Date(t0.getTime() + 2000),
          worker: 'b',
          leaseMs: 1000,
          limit: 5,
          agentId: agent.id,
        });
        expect(second.map((j) => [j.id, j.attempts, j.locked_by])).toEqual([[job.id, 2, 'b']]);
        expect(
          await s.jobs.claimDue({
            now: new Date(t0.getTime() + 5000),
            worker: 'c',
            leaseMs: 1000,
            limit: 5,
            agentId: agent.id,
          }),
        ).toHaveLength(0);
        const failed = await s.jobs.failExpired(new Date(t0.getTime() + 5000), 'timed out');
        expect(failed.map((j) => [j.id, j.status, j.last_error])).toContainEqual([
          job.id,
          'Failed',
          'timed out',
        ]);
      });
    });

    describeRowLocks(() => s);
    describeScepProbeRepository(() => s);

    describe('notifications', () => {
      it('sets created_at to now when left zero, finds due retries and counts by status', async () => {
        const before = new Date();
        const n = await s.notifications.create({
          type: 'ExpirationWarning',
          channel: 'email',
          recipient: 'a@example.test',
          subject: 's',
          message: 'm',
          created_at: new Date(0),
        });
        expect(n.created_at.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
        expect(n).toMatchObject({ status: 'pending', retry_count: 0, next_retry_at: null, last_error: null });
        const due = new Date(Date.UTC(2020, 0, 1));
        const failed = await s.notifications.update(n.id, {
          status: 'failed',
          retry_count: 1,
          next_retry_at: due,
          last_error: 'smtp 451',
        });
        expect(failed).toMatchObject({ status: 'failed', retry_count: 1, last_error: 'smtp 451' });
        expect(
          (await s.notifications.dueForRetry(new Date(Date.UTC(2020, 0, 2)), 1000)).map((x) => x.id),
        ).toContain(n.id);
        expect(
          (await s.notifications.dueForRetry(new Date(Date.UTC(2019, 11, 31)), 1000)).map((x) => x.id),
        ).not.toContain(n.id);
        await s.notifications.update(n.id, { status: 'dead', next_retry_at: null });
        expect((await s.notifications.countByStatus()).dead).toBeGreaterThanOrEqual(1);
        expect((await s.notifications.list({ status: 'dead' })).items.map((x) => x.id)).toContain(n.id);
      });

      it('of concurrent claims of one event exactly one wins, and due lists skip it until the lease expires', async () => {
        const n = await s.notifications.create({
          type: 'RenewalSuccess',
          channel: 'email',
          recipient: 'claim@example.test',
          subject: 's',
          message: 'm',
        });
        const t0 = new Date(Date.UTC(2030, 0, 1));
        const until = new Date(t0.getTime() + 60_000);
        const claims = await Promise.all(
          Array.from({ length: 8 }, () => s.notifications.claim(n, t0, until)),
        );
        const winners = claims.filter((c) => c !== null);
        expect(winners).toHaveLength(1);
        // The claim is bookkeeping: the API's view of the event is unchanged.
        expect(winners[0]).toMatchObject({
          id: n.id,
          status: 'pending',
          retry_count: 0,
          next_retry_at: null,
        });
        expect(
          (await s.notifications.list({ status: 'pending', perPage: 500 })).items.map((x) => x.id),
        ).toContain(n.id);
        const pendingAt = async (at: Date) =>
          (await s.notifications.pendingUnclaimed(at, 1000)).map((x) => x.id);
        expect(await pendingAt(t0)).not.toContain(n.id);
        expect(await s.notifications.claim(n, new Date(until.getTime() - 1), until)).toBeNull();

        // Lease expired (the holder died): the event is listed and claimable again, once.
        const later = new Date(until.getTime() + 1);
        expect(await pendingAt(later)).toContain(n.id);
        const retaken = await Promise.all(
          Array.from({ length: 4 }, () =>
            s.notifications.claim(n, later, new Date(later.getTime() + 60_000)),
          ),
        );
        expect(retaken.filter((c) => c !== null)).toHaveLength(1);

        // A status write ends the attempt and releases the claim; a claim made from the state read
        // before that write (pending, count 0) no longer matches.
        const failed = await s.notifications.update(n.id, {
          status: 'failed',
          retry_count: 1,
          next_retry_at: later,
        });
        expect(await s.notifications.claim(n, later, new Date(later.getTime() + 60_000))).toBeNull();
        expect((await s.notifications.dueForRetry(later, 1000)).map((x) => x.id)).toContain(n.id);
        const retry = await Promise.all(
          Array.from({ length: 4 }, () =>
            s.notifications.claim(failed, later, new Date(later.getTime() + 60_000)),
          ),
        );
        expect(retry.filter((c) => c !== null)).toHaveLength(1);
        expect((await s.notifications.dueForRetry(later, 1000)).map((x) => x.id)).not.toContain(n.id);
      });
    });

    describe('policy rules and violations', () => {
      it('keeps rule config, including text that is not JSON, and replaces violations atomically', async () => {
        const r = await refs();
        const rule = await s.policyRules.create({
          name: 'issuers',
          type: 'AllowedIssuers',
          config: { allowed_issuer_ids: ['iss-1'] },
        });
        expect(rule).toMatchObject({
          severity: 'Warning',
          enabled: true,
          config: { allowed_issuer_ids: ['iss-1'] },
        });
        const broken = await s.policyRules.create({
          name: 'broken',
          type: 'AllowedDomains',
          severity: 'Critical',
          config: '{not json',
        });
        expect((await s.policyRules.require(broken.id)).config).toBe('{not json');
        const empty = await s.policyRules.create({ name: 'empty', type: 'RequiredMetadata' });
        expect(empty.config).toBeNull();
        expect((await s.policyRules.update(rule.id, { name: 'renamed' })).severity).toBe('Warning');

        const c = await s.certificates.create({ ...r.base, name: 'pv', common_name: 'pv.test' });
        const v = {
          rule_id: rule.id,
          rule_type: rule.type,
          certificate_id: c.id,
          severity: rule.severity,
          message: 'issuer not allowed',
        };
        await s.violations.replaceForCertificate(c.id, [
          v,
          { ...v, rule_id: broken.id, rule_type: broken.type, severity: 'Critical' },
        ]);
        expect((await s.violations.list({ certificate_id: c.id })).total).toBe(2);
        await s.violations.replaceForCertificate(c.id, [v]);
        expect((await s.violations.list({ certificate_id: c.id })).items.map((x) => x.rule_id)).toEqual([
          rule.id,
        ]);
        expect((await s.violations.list({ certificate_id: c.id, severity: 'Critical' })).total).toBe(0);
      });
    });

    describe('audit trail', () => {
      const entry = (i: number) => ({
        actor: 'admin',
        actor_type: 'api_key' as const,
        resource_type: 'certificate',
        details: { n: 1, nested: { b: [1, 'x'] } },
        action: i % 2 ? 'certificate_created' : 'login',
        resource_id: `mc-${i}`,
        category: i % 2 ? ('cert_lifecycle' as const) : ('auth' as const),
      });

      it('chains 40 concurrent appends without a fork and streams them page by page', async () => {
        const head = await s.audit.head();
        await Promise.all(Array.from({ length: 40 }, (_, i) => s.audit.append(entry(i))));
        const all = [];
        for await (const e of s.audit.stream({ afterSeq: head.seq, pageSize: 7 })) all.push(e);
        expect(all).toHaveLength(40);
        expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => head.seq + i + 1));
        expect(all[0]?.prev_hash).toBe(head.hash);
        for (let i = 1; i < all.length; i += 1) expect(all[i]?.prev_hash).toBe(all[i - 1]?.hash);
        expect(await s.audit.verify()).toMatchObject({ ok: true, checked: head.seq + 40 });
        let auth = 0;
        for await (const e of s.audit.stream({ afterSeq: head.seq, category: 'auth', pageSize: 3 })) {
          expect(e.category).toBe('auth');
          auth += 1;
        }
        expect(auth).toBe(20);
        let limited = 0;
        for await (const _ of s.audit.stream({ afterSeq: head.seq, limit: 5, pageSize: 2 })) limited += 1;
        expect(limited).toBe(5);
      });

      it('chains many appends of one transaction, shows them to reads in it, and stores none when it rolls back', async () => {
        const head = await s.audit.head();
        const count = 520; // more than one insert statement's worth
        const seen = await s.transaction(async (tx) => {
          const first = await tx.audit.append(entry(0));
          // Read in the same transaction: the append is visible, the head moved.
          const listed = await tx.audit.list({ resource_id: 'mc-0', perPage: 500 });
          expect(listed.items.some((e) => e.id === first.id)).toBe(true);
          expect(await tx.audit.head()).toMatchObject({ seq: first.seq, hash: first.hash });
          for (let i = 1; i < count; i += 1) await tx.audit.append(entry(i));
          return first;
        });
        expect(seen.seq).toBe(head.seq + 1);
        const after = await s.audit.head();
        expect(after.seq).toBe(head.seq + count);
        expect(after.mac).toMatch(/^[0-9a-f]{64}$/);
        const all = [];
        for await (const e of s.audit.stream({ afterSeq: head.seq, pageSize: 200 })) all.push(e);
        expect(all.map((e) => e.seq)).toEqual(Array.from({ length: count }, (_, i) => head.seq + i + 1));
        for (let i = 1; i < all.length; i += 1) expect(all[i]?.prev_hash).toBe(all[i - 1]?.hash);

        await expect(
          s.transaction(async (tx) => {
            for (let i = 0; i < 3; i += 1) await tx.audit.append(entry(i));
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        expect(await s.audit.head()).toEqual(after);
        expect(await s.audit.verify()).toMatchObject({ ok: true, checked: after.seq });
        // The next append extends the committed head.
        const next = await s.audit.append(entry(1));
        expect(next).toMatchObject({ seq: after.seq + 1, prev_hash: after.hash });
      });

      it('moves the stored head with every append and verifies the trail against it', async () => {
        const first = await s.audit.append(entry(1));
        expect(await s.audit.head()).toMatchObject({ seq: first.seq, hash: first.hash });
        const second = await s.audit.append(entry(2));
        const head = await s.audit.head();
        expect(head).toMatchObject({ seq: second.seq, hash: second.hash });
        expect(head.keyed_from_seq).toBeLessThanOrEqual(first.seq);
        expect(head.mac).toMatch(/^[0-9a-f]{64}$/);
        const report = await s.audit.verify({ seq: first.seq, hash: first.hash });
        expect(report).toEqual({ ok: true, checked: head.seq, head });
        // An anchor the trail no longer matches, or one beyond its end, is reported.
        expect(await s.audit.verify({ seq: first.seq, hash: second.hash })).toMatchObject({
          ok: false,
          brokenAt: first.seq,
          reason: 'differs from the anchor',
        });
        expect(await s.audit.verify({ seq: head.seq + 5, hash: second.hash })).toMatchObject({
          ok: false,
          brokenAt: head.seq + 1,
        });
      });

      it('leaves the head where it was when the transaction of an append rolls back', async () => {
        const before = await s.audit.head();
        const failed = await codeOf(
          s.transaction(async (tx) => {
            await tx.audit.append(entry(3));
            expect((await tx.audit.head()).seq).toBe(before.seq + 1);
            throw new Error('roll back');
          }),
        );
        expect(failed).toBeInstanceOf(Error);
        expect(await s.audit.head()).toEqual(before);
        expect(await s.audit.verify()).toMatchObject({ ok: true, checked: before.seq });
        const next = await s.audit.append(entry(4));
        expect(next).toMatchObject({ seq: before.seq + 1, prev_hash: before.hash });
      });

      it('keeps one chain when two instances append alternately, in and outside transactions', async (ctx) => {
        const other = subject.another;
        if (!other) ctx.skip();
        const b = other as Storage;
        const appended = [];
        const start = await s.audit.head();
        // Each instance's head goes stale whenever the other one appended: every append below
        // after the first has to notice that and extend the head the other wrote.
        for (let round = 0; round < 4; round += 1) {
          appended.push(await s.audit.append(entry(round)));
          appended.push(await b.audit.append(entry(round)));
          appended.push(
            ...(await s.transaction(async (tx) => [
              await tx.audit.append(entry(round)),
              await tx.audit.append(entry(round + 1)),
            ])),
          );
          appended.push(...(await b.transaction(async (tx) => [await tx.audit.append(entry(round))])));
        }
        // At once, both in transactions and outside them.
        const both = await Promise.all([
          s.transaction(async (tx) => [await tx.audit.append(entry(7)), await tx.audit.append(entry(8))]),
          b.transaction(async (tx) => [await tx.audit.append(entry(7)), await tx.audit.append(entry(8))]),
          s.audit.append(entry(9)).then((e) => [e]),
          b.audit.append(entry(9)).then((e) => [e]),
        ]);
        appended.push(...both.flat());
        const stored = [];
        for await (const e of s.audit.stream({ afterSeq: start.seq, pageSize: 100 })) stored.push(e);
        expect(stored.map((e) => e.seq)).toEqual(appended.map((_, i) => start.seq + i + 1));
        expect(stored[0]?.prev_hash).toBe(start.hash);
        // What each append returned is what was stored, also where it was chained again.
        const byId = new Map(stored.map((e) => [e.id, e]));
        for (const e of appended) expect(byId.get(e.id)).toEqual(e);
        const head = await b.audit.head();
        expect(head).toMatchObject({ seq: start.seq + appended.length, hash: stored.at(-1)?.hash });
        expect(head.mac).toMatch(/^[0-9a-f]{64}$/);
        expect(await s.audit.verify()).toMatchObject({ ok: true, checked: head.seq });
        expect(await b.audit.verify()).toMatchObject({ ok: true, checked: head.seq });
      });

      it('filters the stream by time range', async () => {
        const t = new Date(Date.UTC(2001, 0, 1));
        const e = await s.audit.append({
          actor: 'x',
          actor_type: 'system',
          action: 'old',
          resource_type: 'r',
          resource_id: 'r',
          category: 'config',
          details: {},
          occurred_at: t,
        });
        const got = [];
        for await (const x of s.audit.stream({ from: t, to: new Date(t.getTime() + 1) })) got.push(x.id);
        expect(got).toEqual([e.id]);
      });
    });
  });
}
