import { randomBytes } from 'node:crypto';
import type {
  CertificateProfile,
  CertificateVersion,
  NewAcmeAuthorization,
  ServiceDeps,
} from '@certwright/core';
import {
  type AcmeAccount,
  type AcmeIdentifier,
  type AcmeOrder,
  acmeIdentifierSchema,
  checkNamesAgainstProfile,
  fail,
  isCertwrightError,
  parseInput,
} from '@certwright/core';
import { MAX_CERT_ID_LENGTH, parseAcmeCertId } from '@certwright/core/pki';
import { z } from 'zod';
import type { AcmeOrderAuthority } from '../wire/order-authority.js';
import {
  ACME_ORDER_LIFETIME_MS,
  type AcmeEnrollment,
  type AcmeOrderView,
  acmeActor,
  effectiveOrderStatus,
  orderView,
  ownedBy,
} from './common.js';
import {
  challengeTypesFor,
  checkLocalhost,
  MAX_ORDER_IDENTIFIERS,
  normalizeIdentifiers,
} from './identifiers.js';
import { findByCertId, issuedToAccount, resolveReplaces } from './issued.js';
import { AcmeRecent, type IssuedChain } from './recent.js';

/** RFC 8555 §7.4 newOrder payload (plus `profile` of the directory's profiles, RFC 9773 `replaces`). */
export const acmeNewOrderSchema = z.object({
  // Any type is read, so that one this server does not certify (`email`) is `unsupportedIdentifier`
  // (RFC 8555 §7.4) rather than a malformed payload; normalizeIdentifiers takes dns and ip only.
  identifiers: z
    .array(acmeIdentifierSchema.extend({ type: z.string().min(1).max(64) }))
    .min(1)
    .max(MAX_ORDER_IDENTIFIERS),
  notBefore: z.iso.datetime({ offset: true }).optional(),
  notAfter: z.iso.datetime({ offset: true }).optional(),
  profile: z.string().min(1).max(64).optional(),
  replaces: z.string().min(1).max(MAX_CERT_ID_LENGTH).optional(),
});
export type AcmeNewOrderInput = z.input<typeof acmeNewOrderSchema>;

/** The sliding window of the per-account new-order limit (the profile's `orders_per_account_per_hour`). */
export const ACME_ORDER_RATE_WINDOW_MS = 60 * 60_000;

/**
 * The directory's `meta.profiles` (draft-aaron-acme-profiles) for an ACME profile: one entry,
 * the name the profile is addressed by. A new order's `profile` must be one of these keys.
 */
export function acmeDirectoryProfiles(profile: CertificateProfile): Record<string, string> {
  const name = profile.acme.path_id ?? profile.id;
  return { [name]: profile.description ?? profile.name };
}

/** Set on a finalize whose issuance lost the race to another finalize of the same order. */
class AlreadyFinalized extends Error {}

/**
 * Orders of the ACME server (RFC 8555 §7.4): creation, POST-as-GET, finalize and the
 * certificate download. Authorization reuse: none — each order gets fresh authorizations, so a
 * proof is never older than the order it admits (docs/protocols/acme.md).
 */
export class AcmeOrderService
  implements Pick<AcmeOrderAuthority, 'newOrder' | 'order' | 'finalize' | 'certificateChain'>
{
  constructor(
    private readonly deps: ServiceDeps,
    private readonly enrollment: AcmeEnrollment,
    /** Shared with the authorization service of the same process (AcmeServer). */
    private readonly recent = new AcmeRecent(() => deps.clock.now().getTime()),
  ) {}

  /**
   * RFC 8555 §7.4 newOrder. `knownProfile`: the account's profile as the caller just read it
   * (the ACME handler routes each request by it), saving a second read; it must be the
   * account's (`profile_id`), or it is read from storage.
   */
  async newOrder(
    account: AcmeAccount,
    input: unknown,
    knownProfile?: CertificateProfile,
  ): Promise<AcmeOrderView> {
    const parsed = parseInput(acmeNewOrderSchema, input);
    const { storage, clock } = this.deps;
    const profile =
      knownProfile?.id === account.profile_id ? knownProfile : await storage.profiles.get(account.profile_id);
    if (!profile) throw fail('not_found', `profile '${account.profile_id}' does not exist`);
    await this.#spendOrderBudget(account, profile);
    const now = clock.now();
    const identifiers = normalizeIdentifiers(parsed.identifiers);
    checkLocalhost(identifiers, profile.acme.allow_localhost);
    // Refused before anything is stored or proven; enroll would refuse the finalize anyway.
    checkNamesAgainstProfile(
      profile,
      identifiers.map((n) => n.identifier),
      'identifiers',
    );
    const offered = identifiers.map((n) => ({
      n,
      types: challengeTypesFor(n, profile.acme.challenge_types),
    }));
    const { notBefore, notAfter } = this.#validity(parsed, profile, now);
    if (parsed.profile !== undefined && !(parsed.profile in acmeDirectoryProfiles(profile)))
      throw fail('invalid_input', `profile '${parsed.profile}' is not offered by this directory`, {
        fields: [{ field: 'profile', message: 'is not one of the directory profiles' }],
      });
    if (parsed.replaces !== undefined) await resolveReplaces(storage, parsed.replaces, account, now);

    const expires = new Date(now.getTime() + ACME_ORDER_LIFETIME_MS);
    const trusted = profile.acme.auth_mode === 'trust_authenticated';
    const authorizations: NewAcmeAuthorization[] = offered.map(({ n, types }) => ({
      identifier: n.wildcard ? { type: 'dns', value: n.identifier.value.slice(2) } : n.identifier,
      wildcard: n.wildcard,
      status: trusted ? 'valid' : 'pending',
      expires,
      // An authorization that is valid from the start has nothing left to prove.
      challenges: trusted
        ? []
        : types.map((type) => ({ type, token: randomBytes(16).toString('base64url'), status: 'pending' })),
    }));
    const created = await storage.acmeOrders.create(
      {
        account_id: account.id,
        profile_id: account.profile_id,
        status: trusted ? 'ready' : 'pending',
        identifiers: identifiers.map((n) => n.identifier),
        not_before: notBefore,
        not_after: notAfter,
        expires,
        acme_profile: parsed.profile ?? null,
        replaces: parsed.replaces ?? null,
      },
      authorizations,
    );
    if (created.order.status === 'ready') this.recent.readyOrders.add(created.order.id, created);
    for (const authz of created.authorizations)
      if (authz.status === 'valid') this.recent.validAuthorizations.add(authz.id, authz);
    return orderView(created.order, created.authorizations, now);
  }

  async order(account: AcmeAccount, orderId: string): Promise<AcmeOrderView> {
    const { order, authorizations } = await this.#read(account, orderId, 'ACME order');
    return orderView(order, authorizations, this.deps.clock.now());
  }

  /** The account's order with its authorizations, in one read. */
  async #read(account: AcmeAccount, orderId: string, what: string) {
    const found = await this.deps.storage.acmeOrders.getWithAuthorizations(orderId);
    ownedBy(found?.order ?? null, account, what, orderId);
    return found!;
  }

  /** The account's order as this process created it, while that says `ready` (recent.ts). */
  #readyOrder(account: AcmeAccount, orderId: string) {
    const recent = this.recent.readyOrders.take(orderId);
    if (!recent || recent.order.account_id !== account.id) return undefined;
    return effectiveOrderStatus(recent.order, this.deps.clock.now()) === 'ready' ? recent : undefined;
  }

  /**
   * RFC 8555 §7.4 finalize. The order must be `ready` (`invalid_state` otherwise, orderNotReady
   * on the wire); the CSR must name exactly the order's identifiers. Issuance is synchronous:
   * the order goes from `ready` to `valid` in the transaction that stores the certificate (the
   * answer is synchronous, so no client could watch a `processing` state), and a crash leaves
   * either an order that can be finalized again or a `valid` one that reports its certificate
   * — never two certificates for one order. A finalize of a `valid` order answers the order as
   * it is.
   */
  async finalize(account: AcmeAccount, orderId: string, csrDer: Uint8Array): Promise<AcmeOrderView> {
    const { clock } = this.deps;
    const recent = this.#readyOrder(account, orderId);
    const { order, authorizations } = recent ?? (await this.#read(account, orderId, 'ACME order'));
    const finalizable = (candidate: AcmeOrder): void => {
      const status = effectiveOrderStatus(candidate, clock.now());
      // `processing` without a certificate is a finalize that crashed or is still running:
      // both may go on, and the first to store a certificate wins (see the hook below).
      if (status !== 'ready' && status !== 'processing')
        throw fail('invalid_state', `order '${candidate.id}' is ${status}, not ready to be finalized`);
    };
    if (effectiveOrderStatus(order, clock.now()) === 'valid')
      return orderView(order, authorizations, clock.now());
    finalizable(order);

    const renews = await this.#renewedCertificate(order, account);
    /** The order as the issuing transaction stored it: the answer needs no second read. */
    let finalized: AcmeOrder | undefined;
    let issued: CertificateVersion | undefined;
    try {
      await this.enrollment.enroll(
        acmeActor(account),
        {
          profileId: order.profile_id,
          csrDer,
          source: 'ACME',
          names: namesOf(order.identifiers),
          ...(order.not_before ? { notBefore: order.not_before } : {}),
          ...(order.not_after ? { notAfter: order.not_after } : {}),
          provenance: { acme_account_id: account.id, acme_order_id: order.id },
          ...(renews ? { renewsCertificateId: renews } : {}),
        },
        {
          // The order is claimed where the certificate is stored, under the order's row lock:
          // whatever happened to it while the CA signed (another finalize won, the account
          // was deactivated, the order expired) is seen here, and then nothing is stored.
          withinTransaction: async (tx, result) => {
            // One conditional update claims it; only when it matches nothing is the order read
            // (locked) to say why.
            finalized =
              (await tx.acmeOrders.markIssued(
                order.id,
                { certificate_id: result.certificate.id, version_id: result.version.id },
                clock.now(),
              )) ?? undefined;
            if (finalized) {
              issued = result.version;
              return;
            }
            const locked = await tx.acmeOrders.lockForUpdate(order.id);
            if (locked.status === 'valid' || locked.version_id !== null) throw new AlreadyFinalized();
            finalizable(locked);
            throw fail('invalid_state', `order '${order.id}' cannot be finalized now`);
          },
        },
      );
    } catch (error) {
      if (
        error instanceof AlreadyFinalized ||
        (isCertwrightError(error) && error.cause instanceof AlreadyFinalized)
      )
        return this.order(account, orderId);
      // A remembered order may have been left `processing` since by a crash elsewhere.
      if (order.status === 'processing' || recent) await this.#release(order.id);
      throw error;
    }
    // Committed: the download that usually follows reads nothing.
    if (finalized && issued)
      this.recent.issued.add(order.id, {
        accountId: account.id,
        versionId: issued.id,
        issuerId: issued.issuer_id,
        certPem: issued.cert_pem,
        chainPem: issued.chain_pem,
      });
    // The authorizations were read with the order: a ready order's are valid and stay so.
    return finalized ? orderView(finalized, authorizations, clock.now()) : this.order(account, orderId);
  }

  /**
   * The certificate of a valid order as an `application/pem-certificate-chain` (RFC 8555
   * §7.4.2): the end-entity certificate, then the issuer chain.
   */
  async certificateChain(
    account: AcmeAccount,
    orderId: string,
  ): Promise<{ pem: string; issuerChainPem: string; issuerId: string; versionId: string }> {
    const recent = this.recent.issued.get(orderId);
    const version = recent
      ? ownedBy({ account_id: recent.accountId }, account, 'ACME certificate', orderId) && recent
      : await this.#storedChain(account, orderId);
    const leaf = version.certPem.endsWith('\n') ? version.certPem : `${version.certPem}\n`;
    return {
      pem: `${leaf}${version.chainPem}`,
      issuerChainPem: version.chainPem,
      issuerId: version.issuerId,
      versionId: version.versionId,
    };
  }

  async #storedChain(account: AcmeAccount, orderId: string): Promise<IssuedChain> {
    const found = await this.deps.storage.acmeOrders.getWithCertificate(orderId);
    const version = ownedBy(found?.order ?? null, account, 'ACME certificate', orderId) && found!.certificate;
    if (!version) throw fail('not_found', `ACME certificate '${orderId}' does not exist`);
    return {
      accountId: account.id,
      versionId: version.version_id,
      issuerId: version.issuer_id,
      certPem: version.cert_pem,
      chainPem: version.chain_pem,
    };
  }

  async #spendOrderBudget(account: AcmeAccount, profile: CertificateProfile): Promise<void> {
    const limit = profile.acme.rate_limits.orders_per_account_per_hour;
    const store = this.deps.ephemeral;
    if (limit === null || !store) return;
    const hit = await store.slidingWindowHit(
      `acme:new-order:${account.id}`,
      ACME_ORDER_RATE_WINDOW_MS,
      limit,
    );
    if (!hit.allowed) {
      const seconds = Math.max(1, Math.ceil(hit.retryAfterMs / 1000));
      throw fail('rate_limited', `too many new orders for this account: at most ${limit} an hour`, {
        extra: { retry_after_seconds: seconds },
      });
    }
  }

  #validity(
    parsed: z.output<typeof acmeNewOrderSchema>,
    profile: CertificateProfile,
    now: Date,
  ): { notBefore: Date | null; notAfter: Date | null } {
    const notBefore = parsed.notBefore ? new Date(parsed.notBefore) : null;
    const notAfter = parsed.notAfter ? new Date(parsed.notAfter) : null;
    const refuse = (field: string, message: string) =>
      fail('validity_not_allowed', `${field} ${message}`, { fields: [{ field, message }] });
    if (notAfter && notAfter.getTime() <= now.getTime()) throw refuse('notAfter', 'is in the past');
    if (notBefore && notAfter && notAfter.getTime() <= notBefore.getTime())
      throw refuse('notAfter', 'is not after notBefore');
    if (notBefore && notBefore.getTime() > now.getTime() + ACME_ORDER_LIFETIME_MS)
      throw refuse('notBefore', 'is further ahead than the order lives');
    const start = notBefore ?? now;
    if (notAfter && notAfter.getTime() - start.getTime() > profile.max_validity_days * 86_400_000)
      throw refuse('notAfter', `asks for more than the profile's ${profile.max_validity_days} days`);
    return { notBefore, notAfter };
  }

  /** The managed certificate a `replaces` order renews, if it is still this account's. */
  async #renewedCertificate(order: AcmeOrder, account: AcmeAccount): Promise<string | undefined> {
    if (!order.replaces) return undefined;
    const version = await findByCertId(this.deps.storage, parseAcmeCertId(order.replaces));
    if (!version || !(await issuedToAccount(this.deps.storage, version.certificate_id, account)))
      return undefined;
    return version.certificate_id;
  }

  /** After a failed issuance, a `processing` order without certificate is `ready` again. */
  async #release(orderId: string): Promise<void> {
    try {
      await this.deps.storage.transaction(async (tx) => {
        const order = await tx.acmeOrders.lockForUpdate(orderId);
        if (order.status === 'processing' && order.version_id === null)
          await tx.acmeOrders.update(orderId, { status: 'ready' });
      });
    } catch (error) {
      // The order stays `processing`, which finalize accepts again: nothing is lost.
      this.deps.logger.warn({ err: error, acme_order_id: orderId }, 'could not release an ACME order');
    }
  }
}

/** The names a CSR must carry for these identifiers. */
export function namesOf(identifiers: readonly AcmeIdentifier[]): { dns: string[]; ip: string[] } {
  return {
    dns: identifiers.filter((i) => i.type === 'dns').map((i) => i.value),
    ip: identifiers.filter((i) => i.type === 'ip').map((i) => i.value),
  };
}
