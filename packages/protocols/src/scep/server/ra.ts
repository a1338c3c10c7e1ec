import { createHash, type KeyObject } from 'node:crypto';
import {
  type CertificateProfile,
  fail,
  type IssuerConnector,
  type ScepRaRecord,
  type ServiceDeps,
} from '@certwright/core';
import {
  certificateToPem,
  exportPkcs8Pem,
  generateKeyPair,
  importPkcs8Pem,
  pemDecodeCertificates,
  readCertificate,
} from '@certwright/core/pki';

/**
 * The registration authority of each SCEP profile (RFC 8894 §2.2): an RSA-2048 certificate
 * with keyEncipherment and digitalSignature, issued by the profile's issuer, that clients
 * encrypt their requests to and that signs every CertRep. Created on first use, its key sealed
 * at rest by storage; re-issued once a third of its life is left (or when the profile's issuer
 * changed). The replaced RA keeps decrypting requests until it expires: a client may have
 * fetched it with GetCACert just before the rotation.
 */

const DAY = 86_400_000;
/** One year, cut to the issuing CA's own end. */
export const SCEP_RA_VALIDITY_DAYS = 365;
/** How long a loaded RA is reused before storage is read again (another instance may have rotated). */
const CACHE_MS = 60_000;

export interface ScepRaKey {
  certificate: Buffer;
  privateKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
}

export interface ScepRa {
  current: ScepRaKey;
  /** The RA before the last rotation, while it is still valid. */
  previous: ScepRaKey | null;
}

export class ScepRaKeys {
  readonly #cache = new Map<string, { ra: ScepRa; fingerprint: string; issuerId: string; until: number }>();
  readonly #pending = new Map<string, Promise<ScepRa>>();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly connector: (issuerId: string) => Promise<IssuerConnector>,
  ) {}

  /** The RA of a profile, created or rotated as needed. */
  async get(profile: CertificateProfile, issuerId: string): Promise<ScepRa> {
    const now = this.deps.clock.now().getTime();
    const cached = this.#cache.get(profile.id);
    if (cached && cached.until > now && cached.issuerId === issuerId && !this.#due(cached.ra.current, now)) {
      return cached.ra;
    }
    // One load per profile at a time: concurrent first requests share it.
    let pending = this.#pending.get(profile.id);
    if (!pending) {
      pending = this.#load(profile, issuerId).finally(() => this.#pending.delete(profile.id));
      this.#pending.set(profile.id, pending);
    }
    return pending;
  }

  /** The stored RA of a profile without creating one (admin snapshots). */
  async stored(profileId: string): Promise<ScepRaRecord | null> {
    return this.deps.storage.scepRa.get(profileId);
  }

  #due(ra: ScepRaKey, now: number): boolean {
    const life = ra.notAfter.getTime() - ra.notBefore.getTime();
    return ra.notAfter.getTime() - now < life / 3;
  }

  async #load(profile: CertificateProfile, issuerId: string): Promise<ScepRa> {
    const repo = this.deps.storage.scepRa;
    let record = await repo.get(profile.id);
    const now = this.deps.clock.now();
    if (
      !record ||
      record.issuer_id !== issuerId ||
      this.#due(toKey(record.certificate_pem, record.private_key_pem), now.getTime())
    ) {
      record = await this.#issue(profile, issuerId, record, now);
      this.deps.logger.info(
        { profile_id: profile.id, not_after: record.not_after.toISOString() },
        'SCEP RA certificate issued',
      );
    }
    const current = toKey(record.certificate_pem, record.private_key_pem);
    const previous =
      record.previous_certificate_pem && record.previous_private_key_pem && record.issuer_id === issuerId
        ? toKey(record.previous_certificate_pem, record.previous_private_key_pem)
        : null;
    const ra: ScepRa = {
      current,
      previous: previous && previous.notAfter.getTime() > now.getTime() ? previous : null,
    };
    this.#cache.set(profile.id, {
      ra,
      fingerprint: record.fingerprint_sha256,
      issuerId: record.issuer_id,
      until: now.getTime() + CACHE_MS,
    });
    return ra;
  }

  async #issue(
    profile: CertificateProfile,
    issuerId: string,
    existing: ScepRaRecord | null,
    now: Date,
  ): Promise<ScepRaRecord> {
    const issuer = await this.deps.storage.issuers.get(issuerId);
    if (!issuer?.enabled) {
      throw fail(
        'issuer_not_ready',
        `the issuer of SCEP profile '${profile.id}' cannot sign its RA certificate`,
      );
    }
    const connector = await this.connector(issuerId);
    const key = await generateKeyPair('RSA-2048');
    const issued = await connector.issue({
      subject: [
        { type: 'O', value: 'certwright' },
        { type: 'CN', value: `SCEP RA ${profile.id}`.slice(0, 64) },
      ],
      subjectAltNames: [],
      publicKey: key.publicKey,
      notBefore: new Date(now.getTime() - 60_000),
      notAfter: new Date(now.getTime() + SCEP_RA_VALIDITY_DAYS * DAY),
      // No extended key usage: the RA signs CMS and receives key transport, nothing else.
      extendedKeyUsage: [],
      mustStaple: false,
    });
    const info = readCertificate(issued.der);
    return this.deps.storage.scepRa.replace(
      {
        profile_id: profile.id,
        issuer_id: issuerId,
        certificate_pem: certificateToPem(issued.der),
        fingerprint_sha256: createHash('sha256').update(issued.der).digest('hex'),
        private_key_pem: exportPkcs8Pem(key.privateKey),
        not_before: info.notBefore,
        not_after: info.notAfter,
        previous_certificate_pem: existing?.issuer_id === issuerId ? existing.certificate_pem : null,
        previous_private_key_pem: existing?.issuer_id === issuerId ? existing.private_key_pem : null,
      },
      existing?.fingerprint_sha256 ?? null,
    );
  }
}

function toKey(certificatePem: string, privateKeyPem: string): ScepRaKey {
  const [certificate] = pemDecodeCertificates(certificatePem);
  const info = readCertificate(certificate!);
  return {
    certificate: certificate!,
    privateKey: importPkcs8Pem(privateKeyPem),
    notBefore: info.notBefore,
    notAfter: info.notAfter,
  };
}
