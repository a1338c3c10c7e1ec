import type { ServiceDeps } from '@certwright/core';
import { fail } from '@certwright/core';
import { parseAcmeCertId } from '@certwright/core/pki';
import type { AcmeOrderAuthority } from '../wire/order-authority.js';
import { findByCertId } from './issued.js';

const DAY_MS = 86_400_000;

/** RFC 9773 §4.2 renewal information. */
export interface AcmeRenewalInfo {
  suggestedWindow: { start: Date; end: Date };
}

/**
 * The suggested renewal window of a certificate (RFC 9773), from the renewal policy it is
 * bound to:
 * - in force: from (notAfter − renewal_window_days) to (notAfter − renewal_window_days / 2);
 *   when that window would open before the certificate was valid (a lifetime shorter than the
 *   policy's window), or without a policy, the last third of its validity;
 * - expired or revoked: from now to one day later — renew at once.
 */
export function renewalWindow(
  validity: { notBefore: Date; notAfter: Date },
  windowDays: number | null,
  state: { now: Date; revoked: boolean },
): { start: Date; end: Date } {
  const { now } = state;
  const notAfter = validity.notAfter.getTime();
  if (state.revoked || notAfter <= now.getTime())
    return { start: now, end: new Date(now.getTime() + DAY_MS) };
  const notBefore = validity.notBefore.getTime();
  if (windowDays !== null) {
    const start = notAfter - windowDays * DAY_MS;
    if (start > notBefore)
      return { start: new Date(start), end: new Date(notAfter - (windowDays * DAY_MS) / 2) };
  }
  const lifetime = notAfter - notBefore;
  return { start: new Date(notAfter - Math.floor(lifetime / 3)), end: new Date(notAfter) };
}

/** renewalInfo (RFC 9773 §4): unauthenticated, by certID. */
export class AcmeRenewalInfoService implements Pick<AcmeOrderAuthority, 'renewalInfo'> {
  constructor(private readonly deps: ServiceDeps) {}

  async renewalInfo(certId: string): Promise<AcmeRenewalInfo> {
    const { storage, clock } = this.deps;
    const version = await findByCertId(storage, parseAcmeCertId(certId));
    if (!version) throw fail('not_found', 'no certificate of this server has that identifier');
    const certificate = await storage.certificates.get(version.certificate_id);
    const policy = certificate ? await storage.renewalPolicies.get(certificate.renewal_policy_id) : null;
    const window = renewalWindow(
      { notBefore: version.not_before, notAfter: version.not_after },
      policy?.renewal_window_days ?? null,
      { now: clock.now(), revoked: version.revoked_at !== null },
    );
    return { suggestedWindow: window };
  }
}
