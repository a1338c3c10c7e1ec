import type {
  AcmeAccount,
  AuditService,
  RevocationReason,
  RevocationService,
  ServiceDeps,
} from '@certwright/core';
import { fail } from '@certwright/core';
import { jwkThumbprint, readCertificate, spkiToPublicJwk } from '@certwright/core/pki';
import type { AcmeOrderAuthority } from '../wire/order-authority.js';
import { acmeActor } from './common.js';
import { findByDer, issuedToAccount } from './issued.js';

/**
 * RFC 5280 §5.3.1 reason codes as they arrive in an ACME revokeCert (RFC 8555 §7.6). Code 8
 * (removeFromCRL) is no reason to revoke, and 10 (aACompromise) concerns attribute certificates:
 * both are recorded as `unspecified`. Code 7 is unassigned.
 */
const REASONS: ReadonlyMap<number, RevocationReason> = new Map([
  [0, 'unspecified'],
  [1, 'keyCompromise'],
  [2, 'caCompromise'],
  [3, 'affiliationChanged'],
  [4, 'superseded'],
  [5, 'cessationOfOperation'],
  [6, 'certificateHold'],
  [8, 'unspecified'],
  [9, 'privilegeWithdrawn'],
  [10, 'unspecified'],
]);

/** The service's reason for an ACME reason code; `invalid_input` for a code RFC 5280 does not assign. */
export function acmeRevocationReason(code: number | undefined): RevocationReason {
  if (code === undefined) return 'unspecified';
  const reason = Number.isInteger(code) ? REASONS.get(code) : undefined;
  if (!reason)
    throw fail(
      'invalid_input',
      `revocation reason ${String(code).slice(0, 16)} is not an RFC 5280 reason code`,
      {
        fields: [{ field: 'reason', message: 'is not an RFC 5280 reason code' }],
      },
    );
  return reason;
}

/** RFC 7638 SHA-256 thumbprint (base64url) of a SubjectPublicKeyInfo. */
export const spkiThumbprint = (spki: Uint8Array): string => jwkThumbprint(spkiToPublicJwk(spki));

/** Who asks: an account (JWS with kid) or the holder of the certificate's key (JWS with jwk). */
export type AcmeRevoker = { account: AcmeAccount } | { jwkThumbprint: string };

export interface AcmeRevokeInput {
  /** The `certificate` of the payload, decoded from base64url. */
  certificateDer: Uint8Array;
  /** The payload's `reason`, an RFC 5280 code. */
  reason?: number;
}

/**
 * revokeCert (RFC 8555 §7.6) through the service's one revocation pipeline, so CRL, OCSP,
 * notifications and the audit trail follow as for any revocation.
 */
export class AcmeRevocationService implements Pick<AcmeOrderAuthority, 'revoke'> {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly revocation: RevocationService,
  ) {}

  async revoke(input: AcmeRevokeInput, by: AcmeRevoker): Promise<void> {
    const { storage, clock } = this.deps;
    const reason = acmeRevocationReason(input.reason);
    const info = readCertificate(input.certificateDer);
    const version = await findByDer(storage, input.certificateDer);
    if (!version) throw fail('not_found', 'this server did not issue that certificate');
    if ('account' in by) {
      if (!(await issuedToAccount(storage, version.certificate_id, by.account)))
        throw fail('not_permitted', 'the certificate was not issued to this account');
    } else if (spkiThumbprint(info.spki) !== by.jwkThumbprint) {
      throw fail('not_permitted', 'the request is not signed by the certificate key');
    }
    const certificate = await storage.certificates.get(version.certificate_id);
    if (!certificate || version.revoked_at !== null || certificate.status === 'Revoked')
      throw fail('already_revoked', 'the certificate is already revoked');
    const actor =
      'account' in by ? acmeActor(by.account) : { type: 'anonymous' as const, id: `jwk:${by.jwkThumbprint}` };

    if (certificate.current_version_id === version.id) {
      // The certificate in force: the managed certificate is revoked as a whole.
      const outcome = await this.revocation.revokeCertificates([certificate.id], reason, actor);
      if (outcome.revoked.length === 0) throw fail('already_revoked', 'the certificate is already revoked');
      return;
    }
    // An older version that a renewal replaced: only it is revoked, the renewal stays in force.
    await storage.transaction(async (tx) => {
      const current = await tx.versions.get(version.id);
      if (!current || current.revoked_at !== null)
        throw fail('already_revoked', 'the certificate is already revoked');
      await tx.versions.revoke(version.id, { revoked_at: clock.now(), reason });
      await this.audit.record(
        actor,
        {
          action: 'certificates_revoked',
          category: 'cert_lifecycle',
          resource_type: 'certificate',
          resource_id: certificate.id,
          details: { reason, certificate_ids: [certificate.id], version_id: version.id, via: 'acme' },
        },
        tx,
      );
    });
    this.revocation.reportRevoked({ [version.issuer_id]: 1 });
    await this.revocation.notify({
      issuer_ids: [version.issuer_id],
      revoked: 1,
      reason,
      certificate_ids: [certificate.id],
      version_id: version.id,
    });
  }
}
