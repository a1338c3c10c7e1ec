import { createHash } from 'node:crypto';
import type { CertificateVersion, ManagedCertificate } from '../../domain/certificate.js';
import type { Issuer } from '../../domain/issuer.js';
import type { PolicyRule } from '../../domain/policy.js';
import { fail, notFound } from '../../errors.js';
import type { IssueRequest, IssueResult } from '../../issuers/connector.js';
import { certificateToPem } from '../../pki/certificate.js';
import { readCertificate } from '../../pki/certificate-info.js';
import { exportPkcs8Pem, type KeyPair, type PublicKeyDescription } from '../../pki/keys.js';
import { readRuleConfig } from '../../policy/config.js';
import { domainMatches } from '../../policy/evaluators.js';
import type { NewCertificate, NewCertificateVersion, Storage } from '../../ports/storage.js';
import { namesToSign } from '../certificate-names.js';
import type { ServiceDeps } from '../context.js';
import { RevisionedCache } from '../revisioned-cache.js';
import type { IssuerConnectorCache } from './connector-cache.js';
import { ReadGroup } from './read-group.js';

/**
 * The one way a certificate gets signed and stored, for job issuance and renewal as for
 * protocol enrollment: `sign` makes the last checks and asks the issuer's connector, outside
 * any transaction; `storeVersion` writes the version inside the caller's transaction.
 *
 * Crash safety: the CA signs first; the version and everything that goes with it are then
 * written in ONE transaction by the caller. A crash before the commit leaves no version (the
 * signed certificate was never published anywhere); a crash after it leaves a complete one.
 */

/** Test seams for the crash-safety test; never set in production. */
export interface IssuanceHooks {
  /** After the CA signed, before anything is stored. */
  afterSign?: () => void | Promise<void>;
  /** Inside the storing transaction, after the version was written, before commit. */
  beforeCommit?: () => void | Promise<void>;
}

/** What the connector is asked to sign, with what the stored version records about the key. */
export interface SigningMaterial {
  request: IssueRequest;
  /** The subject's common name (null when the subject carries none); linted with the SANs. */
  commonName: string | null;
  /** Present when the server generated the key (it is stored with the version, sealed). */
  keyPair?: KeyPair;
  csrPem: string | null;
  key: PublicKeyDescription;
}

/** Policy severities that stop a signature; a Warning only records a violation. */
const BLOCKING = new Set(['Error', 'Critical']);

/**
 * Issuer reads reused for `ttlMs` while `revision` (IssuerService's change counter) stays put
 * (revisioned-cache.ts): a disable through this process is seen by its next signature, one
 * through another instance within `ttlMs` — as the enrollment path's profile reads.
 */
export interface IssuerReadCacheOptions {
  ttlMs: number;
  revision: () => number;
}

export class CertificateSigner {
  /** Concurrent signatures by one issuer share their read of it (read-group.ts), then maybe reuse it. */
  readonly #issuer: (id: string) => Promise<Issuer | null>;

  constructor(
    private readonly deps: ServiceDeps,
    readonly connectors: IssuerConnectorCache,
    private readonly hooks: IssuanceHooks = {},
    issuerReads?: IssuerReadCacheOptions,
  ) {
    const shared = new ReadGroup((id) => deps.storage.issuers.get(id));
    const cache =
      issuerReads && issuerReads.ttlMs > 0
        ? new RevisionedCache<Issuer | null>({ ...issuerReads, keep: (issuer) => issuer !== null })
        : null;
    this.#issuer = cache ? (id) => cache.get(id, () => shared.get(id)) : (id) => shared.get(id);
  }

  /**
   * A disabled issuer signs nothing (409 `issuer_disabled`); it still publishes CRL and OCSP
   * for what it issued. A missing issuer is not_found.
   */
  async assertIssuerEnabled(issuerId: string, tx: Storage = this.deps.storage): Promise<void> {
    const issuer = tx === this.deps.storage ? await this.#issuer(issuerId) : await tx.issuers.get(issuerId);
    if (!issuer) throw notFound('issuer', issuerId);
    if (!issuer.enabled) {
      throw fail('issuer_disabled', `issuer '${issuerId}' is disabled: it signs no certificate`, {
        extra: { resource: 'issuer', id: issuerId },
      });
    }
  }

  /**
   * The last checks before a signature, then the signature: the issuer is enabled, every name
   * passes the lint (certificate-names.ts), and AllowedDomains rules of severity Error or
   * Critical allow every name. Runs outside any transaction.
   */
  async sign(
    issuerId: string,
    material: SigningMaterial,
    kind: 'issue' | 'renew',
    enabledRules?: readonly PolicyRule[],
  ): Promise<IssueResult> {
    await this.assertIssuerEnabled(issuerId);
    const subjectAltNames = namesToSign(material.commonName, material.request.subjectAltNames);
    await this.assertAllowedDomains(
      subjectAltNames.map((s) => s.value),
      enabledRules?.filter((r) => r.type === 'AllowedDomains' && r.enabled),
    );
    const request: IssueRequest = { ...material.request, subjectAltNames };
    const connector = await this.connectors.require(issuerId);
    const issued = kind === 'renew' ? await connector.renew(request) : await connector.issue(request);
    await this.hooks.afterSign?.();
    return issued;
  }

  /**
   * Refuses (`name_not_allowed`) names outside an enabled AllowedDomains rule of severity Error
   * or Critical. `rules`: those enabled AllowedDomains rules when the caller already read them.
   */
  async assertAllowedDomains(names: readonly string[], rules?: readonly PolicyRule[]): Promise<void> {
    const problems: string[] = [];
    for (let page = 1; ; page += 1) {
      const result = rules
        ? { items: rules }
        : await this.deps.storage.policyRules.list({
            type: 'AllowedDomains',
            enabled: true,
            page,
            perPage: 500,
          });
      for (const rule of result.items) {
        if (!BLOCKING.has(rule.severity)) continue;
        const config = readRuleConfig('AllowedDomains', rule.config);
        // A rule without usable config records its own violation; it cannot say which names to allow.
        if (config.kind !== 'ok') continue;
        const patterns = (config.value as { allowed_domains?: string[] }).allowed_domains ?? [];
        const outside = names.filter((n) => !patterns.some((p) => domainMatches(p, n)));
        if (outside.length > 0)
          problems.push(`${outside.join(', ')} outside the allowed domains of rule '${rule.name}'`);
      }
      if (rules || result.items.length < 500) break;
    }
    if (problems.length > 0) {
      throw fail('name_not_allowed', `certificate request refused: ${problems.join('; ')}`, {
        fields: [{ field: 'sans', message: problems.join('; ') }],
      });
    }
  }

  /** Writes the signed certificate as a new version of `certificateId` inside `tx`. */
  async storeVersion(
    tx: Storage,
    certificateId: string,
    issuerId: string,
    material: SigningMaterial,
    issued: IssueResult,
  ): Promise<CertificateVersion> {
    const version = await tx.versions.create({
      certificate_id: certificateId,
      ...this.#version(issuerId, material, issued),
    });
    await this.hooks.beforeCommit?.();
    return version;
  }

  /**
   * Writes a new managed certificate together with the signed certificate as its first version
   * inside `tx` (enrollment of a new certificate).
   */
  async storeWithCertificate(
    tx: Storage,
    certificate: NewCertificate,
    issuerId: string,
    material: SigningMaterial,
    issued: IssueResult,
  ): Promise<{ certificate: ManagedCertificate; version: CertificateVersion }> {
    const stored = await tx.versions.createWithCertificate(
      certificate,
      this.#version(issuerId, material, issued),
    );
    await this.hooks.beforeCommit?.();
    return stored;
  }

  #version(
    issuerId: string,
    material: SigningMaterial,
    issued: IssueResult,
  ): Omit<NewCertificateVersion, 'certificate_id'> {
    const info = readCertificate(issued.der);
    const key = material.key;
    return {
      issuer_id: issuerId,
      serial_number: issued.serialNumber,
      fingerprint_sha256: createHash('sha256').update(issued.der).digest('hex'),
      // A post-quantum key is named by its parameter set (ML-DSA-65 …): it has no other size.
      key_algorithm:
        key.type === 'EC'
          ? 'ECDSA'
          : key.type === 'ML-DSA' || key.type === 'SLH-DSA'
            ? key.parameterSet
            : key.type,
      key_size: key.type === 'RSA' ? key.bits : key.type === 'EC' ? Number(key.curve.slice(2)) : 0,
      subject: info.subject.text,
      issued_at: this.deps.clock.now(),
      not_before: issued.notBefore,
      not_after: issued.notAfter,
      csr_pem: material.csrPem,
      cert_pem: certificateToPem(issued.der),
      chain_pem: issued.chainPem,
      private_key_pem: material.keyPair ? exportPkcs8Pem(material.keyPair.privateKey) : null,
    };
  }
}
