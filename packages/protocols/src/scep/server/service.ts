import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  type Actor,
  type AuditService,
  type CertificateProfile,
  type EnrollmentSecrets,
  type EnrollmentService,
  type FailureReason,
  fail,
  type IssuerConnector,
  isCertwrightError,
  protocolProfile,
  publicMessage,
  RevisionedCache,
  type ServiceDeps,
  type Storage,
} from '@certwright/core';
import {
  assertAnswerable,
  buildCertsOnly,
  type CmsDigest,
  certificateInfo,
  openEnvelopedData,
  type PublicKeyDescription,
  parseCertificationRequest,
  parseScepRequest,
  pemDecodeCertificates,
  readCertificate,
  type ScepRequest,
  verifySignerInfo,
} from '@certwright/core/pki';
import { EstTrustBundles } from '../../shared/trust-bundles.js';
import { checkScepChallenge, type ScepChallengeVerdict, type ScepMdmVerifier } from './challenge.js';
import { type ScepRa, type ScepRaKey, ScepRaKeys } from './ra.js';

/**
 * The SCEP server (RFC 8894) as a library: which profile a route serves, its RA, and one
 * PKIOperation — parse, verify, decrypt, authenticate (challenge, renewal certificate, mutual
 * TLS), issue through the one enrollment path, remember the transaction for polls, audit.
 * `@certwright/protocols/scep` puts HTTP around it and writes the CertRep. docs/protocols/scep.md.
 */

export const SCEP_AUDIT_ACTIONS = [
  'scep_pkcsreq',
  'scep_renewalreq',
  'scep_pkcsreq_mdm',
  'scep_renewalreq_mdm',
] as const;
export type ScepAuditAction = (typeof SCEP_AUDIT_ACTIONS)[number];

/** GetCACaps (RFC 8894 §3.5.2): what this server implements, one per line. */
export const SCEP_CAPABILITIES = [
  'AES',
  'POSTPKIOperation',
  'Renewal',
  'SCEPStandard',
  'SHA-256',
  'SHA-512',
] as const;

/** What SCEP needs from the issuance pipeline. */
export type ScepIssuance = Pick<EnrollmentService, 'enroll'>;

export interface ScepOptions {
  /** The profile of the root routes (`/scep`, `/scep-mtls`); default `prof-default`. */
  defaultProfileId?: string;
  /** Device-management challenge verifier (see challenge.ts). */
  mdmVerifier?: ScepMdmVerifier;
  /** Reads a trust bundle file; default `fs.readFile(path, 'utf8')`. */
  readTrustBundle?: (path: string) => Promise<string>;
  /** How long a transaction's result is kept for polls and a senderNonce for replay checks; default 7 days. */
  transactionTtlMs?: number;
  /** Largest accepted distance of a request's signingTime from now; default 24 h. */
  maxClockSkewMs?: number;
  /**
   * How long GetCACaps, GetCACert and PKIOperation reuse a profile lookup (PKIOperation's with
   * the profile's challenge secrets; default 1000 ms; 0: never). A change made through this
   * process is seen at once (see `profileRevision`), one made by another instance within this
   * time.
   */
  profileLookupMs?: number;
  /** The profile service's change counter (`ProfileService.revision`); without it nothing is reused. */
  profileRevision?: () => number;
  /**
   * Enrollment requests (PKCSReq, RenewalReq) one credential may make per window, per profile,
   * counted in the ephemeral store (shared by every instance on Redis). The credential is what
   * authenticated the request: the TLS client certificate on `/scep-mtls`, the certificate
   * being renewed, the device a device-management challenge names, else — a static challenge
   * password being a fleet's shared secret — the requester's signing key. Default 60 per minute;
   * null: unlimited. Over it: HTTP 503 with Retry-After, nothing issued.
   */
  rateLimit?: { limit: number; windowMs: number } | null;
  /**
   * Accept requests whose content is encrypted with single DES (micromdm scepclient ≤ 2.1 and
   * other old clients use it whatever GetCACaps says); default true. Replies are always AES.
   */
  acceptSingleDes?: boolean;
}

/** What only the connection knows about a SCEP client. */
export interface ScepClient {
  remoteAddress: string;
  /** The request came on a mutual-TLS route (`/scep-mtls/…`). */
  mtls: boolean;
  /** The TLS client certificate chain, DER, leaf first; empty when none was presented. */
  clientCertificateChain: readonly Uint8Array[];
}

/** What a CertRep answers; the protocol layer signs it with the RA. */
export type ScepOutcome =
  | { status: 'SUCCESS'; certificates: Buffer[] }
  | { status: 'FAILURE'; reason: FailureReason; message: string; retryAfterSeconds?: number };

export const DEFAULT_SCEP_RATE_LIMIT = Object.freeze({ limit: 60, windowMs: 60_000 });

/**
 * One answered PKIOperation: what the CertRep needs. `outcome` FAILURE carries the typed
 * reason (the protocol maps it to a failInfo); nothing was issued then.
 */
export interface ScepOperationResult {
  ra: ScepRaKey;
  transactionId: string;
  /** The request's senderNonce (the reply's recipientNonce). */
  recipientNonce: Uint8Array;
  /** Fresh, for the reply's senderNonce. */
  senderNonce: Uint8Array;
  digest: CmsDigest;
  /** The requester's signing certificate: the SUCCESS envelope's recipient. */
  requester: Uint8Array;
  outcome: ScepOutcome;
}

export interface ScepProfileSnapshot {
  profile_id: string;
  name: string;
  path_id: string | null;
  enabled: boolean;
  ra_subject: string | null;
  ra_not_before: string | null;
  ra_not_after: string | null;
  mtls_enabled: boolean;
  mtls_trust_bundle_path: string | null;
  challenge_password_set: boolean;
}

const DAY = 86_400_000;
const SERVER_SIDE = new Set(['internal', 'unavailable', 'config_invalid']);

/**
 * What authenticated an enrollment, for its per-credential limit (see `ScepOptions.rateLimit`):
 * a digest, never the credential itself.
 */
function credentialOf(verdict: ScepChallengeVerdict, request: ScepRequest, client: ScepClient): string {
  const leaf = client.clientCertificateChain[0];
  if (client.mtls && leaf) return `tls:${fingerprint(leaf)}`;
  if (verdict.method === 'mdm' && verdict.details.mdm_subject) {
    return `mdm:${createHash('sha256').update(verdict.details.mdm_subject).digest('base64url')}`;
  }
  // A renewal's signer is the certificate being renewed; a static challenge's, the device's key.
  return `${verdict.method}:${fingerprint(request.signerCertificate)}`;
}

/** A transaction as remembered for polls and resent requests. */
interface StoredTransaction {
  status: 'SUCCESS' | 'FAILURE';
  certificate?: string;
  reason?: FailureReason;
  message?: string;
  /** SHA-256 of the requester's signing certificate: only it may poll. */
  requester: string;
  /** SHA-256 of the request's decrypted content (the CSR) that was answered with SUCCESS. */
  request?: string;
}

/** GetCACert's certificates-only message of a profile, kept while its CA chain and RA are unchanged. */
interface CaCertsEntry {
  chain: string;
  ra: ScepRaKey;
  ca: Buffer[];
  message: Buffer;
}

export class ScepService {
  readonly #ra: ScepRaKeys;
  readonly #trust: EstTrustBundles;
  readonly #defaultProfileId: string;
  readonly #ttlMs: number;
  readonly #skewMs: number;
  readonly #acceptSingleDes: boolean;
  readonly #rateLimit: { limit: number; windowMs: number } | null;
  readonly #challengeCache = new Map<string, number>();
  readonly #memoryNonces = new Map<string, number>();
  readonly #caCerts = new Map<string, CaCertsEntry>();
  /**
   * Profile lookups by route, with the profile's challenge secrets (see `profileLookupMs`);
   * null without `profileRevision`. GetCACaps, GetCACert and PKIOperation share one entry: a
   * client asks all three per enrollment, and one read serves them.
   */
  readonly #operationLookups: RevisionedCache<{
    profile: CertificateProfile;
    secrets: EnrollmentSecrets;
  }> | null;
  #mdm: ScepMdmVerifier | undefined;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly caChain: (issuerId: string) => Promise<string[]>,
    connector: (issuerId: string) => Promise<IssuerConnector>,
    private readonly issuance: () => ScepIssuance | undefined,
    options: ScepOptions = {},
  ) {
    this.#ra = new ScepRaKeys(deps, connector);
    this.#trust = new EstTrustBundles(options.readTrustBundle);
    this.#defaultProfileId = options.defaultProfileId ?? 'prof-default';
    this.#ttlMs = options.transactionTtlMs ?? 7 * DAY;
    this.#skewMs = options.maxClockSkewMs ?? DAY;
    this.#acceptSingleDes = options.acceptSingleDes ?? true;
    this.#rateLimit = options.rateLimit === undefined ? DEFAULT_SCEP_RATE_LIMIT : options.rateLimit;
    this.#mdm = options.mdmVerifier;
    const revision = options.profileRevision;
    const ttlMs = options.profileLookupMs ?? 1000;
    this.#operationLookups = revision && ttlMs > 0 ? new RevisionedCache({ ttlMs, revision }) : null;
  }

  get defaultProfileId(): string {
    return this.#defaultProfileId;
  }

  /** Plugs in the device-management challenge verifier. */
  setMdmVerifier(verifier: ScepMdmVerifier | undefined): void {
    this.#mdm = verifier;
  }

  /**
   * The profile a route serves: the default profile for the root routes, otherwise the one
   * whose `scep.path_id` is `pathId` (or, for a profile without one, its id). A profile with
   * SCEP disabled is as absent as an unknown one: `not_found`.
   */
  async profile(pathId: string | null): Promise<CertificateProfile> {
    return protocolProfile(this.deps.storage, 'scep', pathId, this.#defaultProfileId);
  }

  /** GetCACaps. */
  async capabilities(pathId: string | null): Promise<readonly string[]> {
    await this.#routedProfile(pathId);
    return SCEP_CAPABILITIES;
  }

  /**
   * {@link profile} for GetCACaps and GetCACert: the entry PKIOperation's lookup reuses (see
   * {@link ScepService.#profileWithSecrets}), so a client's three requests cost one read per
   * `profileLookupMs`. A refusal (`not_found`) is not remembered.
   */
  async #routedProfile(pathId: string | null): Promise<CertificateProfile> {
    if (!this.#operationLookups) return this.profile(pathId);
    return (await this.#profileWithSecrets(pathId)).profile;
  }

  /** GetCACert: the issuing CA, the CAs above it, then the RA certificate, DER. */
  async caCertificates(pathId: string | null): Promise<{ ca: Buffer[]; ra: Buffer }> {
    const entry = await this.#caCertificates(pathId);
    return { ca: entry.ca, ra: entry.ra.certificate };
  }

  /**
   * GetCACert as sent (RFC 8894 §4.2.1.2): a certificates-only SignedData of the CA chain and
   * the RA certificate. Built once per profile and reused while the issuer's chain and the RA
   * are the same ones (an RA rotation or a changed chain builds it anew).
   */
  async caCertificatesMessage(pathId: string | null): Promise<Buffer> {
    return (await this.#caCertificates(pathId)).message;
  }

  async #caCertificates(pathId: string | null): Promise<CaCertsEntry> {
    const profile = await this.#routedProfile(pathId);
    const issuerId = issuerOf(profile);
    const chain = (await this.caChain(issuerId)).join('');
    const ra = (await this.#ra.get(profile, issuerId)).current;
    const cached = this.#caCerts.get(profile.id);
    if (cached && cached.ra === ra && cached.chain === chain) return cached;
    const ca = pemDecodeCertificates(chain);
    const entry: CaCertsEntry = { chain, ra, ca, message: buildCertsOnly([...ca, ra.certificate]) };
    if (this.#caCerts.size >= 1000) this.#caCerts.clear();
    this.#caCerts.set(profile.id, entry);
    return entry;
  }

  /**
   * One PKIOperation. Throws (no CertRep can be formed) for an unknown profile (`not_found`),
   * a refused client certificate on the mutual-TLS route (`not_permitted`) and a body that is
   * not a PKIMessage (`malformed`, `too_large`); every other failure is a FAILURE outcome.
   */
  async pkiOperation(
    pathId: string | null,
    client: ScepClient,
    body: Uint8Array,
  ): Promise<ScepOperationResult> {
    const { profile, secrets } = await this.#profileWithSecrets(pathId);
    if (client.mtls) await this.#checkClientCertificate(profile, client);
    const request = parseScepRequest(body);
    const issuerId = issuerOf(profile);
    const ra = await this.#ra.get(profile, issuerId);
    const actor: Actor = { type: 'anonymous', id: `scep:${client.remoteAddress}` };
    const base = {
      transactionId: request.transactionId,
      recipientNonce: request.senderNonce,
      senderNonce: Buffer.from(this.#random(16)),
      requester: request.signerCertificate,
    };
    let digest: CmsDigest = 'sha256';
    const details: Record<string, unknown> = {
      message_type: request.messageType,
      transaction_id: request.transactionId,
      route: client.mtls ? 'scep-mtls' : 'scep',
      remote_address: client.remoteAddress,
    };
    // Only a request whose signature verified may leave a result for polls, and never a replay.
    let remember = false;
    try {
      const verified = verifySignerInfo(request.signedData, request.signer, request.signerCertificate);
      digest = verified.digest;
      this.#checkTime(verified.signingTime);
      assertAnswerable(request.messageType);
      await this.#assertFresh(profile, request);
      remember = true;
      const inner = this.#open(ra, request);
      if (request.messageType === 'CertPoll') {
        const outcome = await this.#poll(profile, request);
        return { ...base, ra: ra.current, digest, outcome };
      }
      const resent = await this.#resent(profile, request, inner);
      if (resent) return { ...base, ra: ra.current, digest, outcome: resent };
      const certificates = await this.#enroll(
        profile,
        secrets,
        issuerId,
        request,
        inner,
        client,
        actor,
        details,
      );
      return { ...base, ra: ra.current, digest, outcome: { status: 'SUCCESS', certificates } };
    } catch (error) {
      // An outage or a bug is the server's, not the request's: HTTP 5xx, no CertRep.
      if (!isCertwrightError(error) || SERVER_SIDE.has(error.code)) throw error;
      const retryAfter = error.extra.retry_after_seconds;
      const outcome: ScepOutcome = {
        status: 'FAILURE',
        reason: error.reason,
        message: publicMessage(error),
        ...(typeof retryAfter === 'number' ? { retryAfterSeconds: retryAfter } : {}),
      };
      if (request.messageType === 'PKCSReq' || request.messageType === 'RenewalReq') {
        if (remember) await this.#remember(profile, request, outcome);
        await this.#audit(actor, request.messageType, null, profile, {
          ...details,
          outcome: 'failure',
          reason: error.reason,
          error: outcome.message,
        });
      }
      return { ...base, ra: ra.current, digest, outcome };
    }
  }

  /** Per-profile snapshots for the admin API (the challenge secret never, only whether it is set). */
  async profileSnapshots(): Promise<ScepProfileSnapshot[]> {
    const out: ScepProfileSnapshot[] = [];
    for (let page = 1; ; page++) {
      const { items, total } = await this.deps.storage.profiles.list({ page, perPage: 200 });
      for (const p of items) {
        if (!p.scep.enabled && p.id !== this.#defaultProfileId) continue;
        const ra = await this.#ra.stored(p.id);
        const info = ra ? readCertificate(pemDecodeCertificates(ra.certificate_pem)[0]!) : null;
        out.push({
          profile_id: p.id,
          name: p.name,
          path_id: p.scep.path_id,
          enabled: p.scep.enabled,
          ra_subject: info?.subject.text ?? null,
          ra_not_before: info?.notBefore.toISOString() ?? null,
          ra_not_after: info?.notAfter.toISOString() ?? null,
          mtls_enabled: p.scep.mtls_trust_bundle_path !== null,
          mtls_trust_bundle_path: p.scep.mtls_trust_bundle_path,
          challenge_password_set: (p.enrollment_secrets_set.scep ?? []).includes('challenge_password'),
        });
      }
      if (page * 200 >= total) break;
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------

  #random(length: number): Uint8Array {
    return this.deps.random ? this.deps.random.bytes(length) : cryptoRandom(length);
  }

  async #checkClientCertificate(profile: CertificateProfile, client: ScepClient): Promise<void> {
    const path = profile.scep.mtls_trust_bundle_path;
    if (!path)
      throw fail('not_permitted', 'this SCEP profile accepts no client certificates (no trust bundle)');
    if (client.clientCertificateChain.length === 0) {
      throw fail('not_permitted', 'a TLS client certificate is required on this route');
    }
    let bundle: Awaited<ReturnType<EstTrustBundles['get']>>;
    try {
      bundle = await this.#trust.get(profile.id, path, this.deps.clock.now());
    } catch (cause) {
      this.deps.logger.error({ err: cause, profile_id: profile.id }, 'SCEP trust bundle cannot be loaded');
      throw fail('not_permitted', 'client certificates cannot be checked now (no trust anchors loaded)', {
        cause,
      });
    }
    try {
      bundle.verify(client.clientCertificateChain, { now: this.deps.clock.now() });
    } catch (error) {
      if (!isCertwrightError(error) || error.code === 'internal') throw error;
      throw fail('not_permitted', error.message, { cause: error });
    }
  }

  #checkTime(signingTime: Date | undefined): void {
    if (!signingTime) return;
    const skew = Math.abs(signingTime.getTime() - this.deps.clock.now().getTime());
    if (skew > this.#skewMs) {
      throw fail('time_invalid', 'the signingTime of the request is too far from the server time');
    }
  }

  /** A senderNonce is used once per profile (RFC 8894 §3.2.1.5): a replayed message is refused. */
  async #assertFresh(profile: CertificateProfile, request: ScepRequest): Promise<void> {
    const key = `scep:nonce:${profile.id}:${Buffer.from(request.senderNonce).toString('hex')}`;
    const store = this.deps.ephemeral;
    let fresh: boolean;
    if (store) fresh = await store.putIfAbsent(key, '1', this.#ttlMs);
    else {
      const now = this.deps.clock.now().getTime();
      const seen = this.#memoryNonces.get(key);
      fresh = seen === undefined || seen < now;
      if (fresh) {
        if (this.#memoryNonces.size > 100_000) this.#memoryNonces.clear();
        this.#memoryNonces.set(key, now + this.#ttlMs);
      }
    }
    if (!fresh) throw fail('duplicate', 'this message was seen before (replayed senderNonce)');
  }

  /** The request content, decrypted with the RA key it names (current, else the one before). */
  #open(ra: ScepRa, request: ScepRequest): Buffer {
    for (const key of [ra.current, ra.previous]) {
      if (!key) continue;
      try {
        return openEnvelopedData(request.envelope, {
          privateKey: key.privateKey,
          certificate: key.certificate,
          allowSingleDes: this.#acceptSingleDes,
          limits: { maxBytes: 256 * 1024 },
        });
      } catch (error) {
        if (isCertwrightError(error) && error.reason === 'not_found') continue;
        throw error;
      }
    }
    throw fail('signature_invalid', "the request is not encrypted to this server's RA certificate");
  }

  /**
   * The profile of a PKIOperation with its opened secrets (the challenge password hash), in one
   * read for the root routes; as {@link profile} otherwise. Reused like GetCACaps' lookup (see
   * `profileLookupMs`): for `profileLookupMs` while no profile changed through this process (a
   * changed challenge password or a disabled SCEP block is seen by the next request), by
   * another instance within that time. A refusal (`not_found`) is not remembered.
   */
  async #profileWithSecrets(
    pathId: string | null,
  ): Promise<{ profile: CertificateProfile; secrets: EnrollmentSecrets }> {
    if (!this.#operationLookups) return this.#readProfileWithSecrets(pathId);
    return this.#operationLookups.get(pathId ?? '', () => this.#readProfileWithSecrets(pathId));
  }

  async #readProfileWithSecrets(
    pathId: string | null,
  ): Promise<{ profile: CertificateProfile; secrets: EnrollmentSecrets }> {
    if (pathId !== null) {
      const profile = await this.profile(pathId);
      const secrets = (await this.deps.storage.profiles.getWithSecrets(profile.id))?.secrets ?? {};
      return { profile, secrets };
    }
    const found = await this.deps.storage.profiles.getWithSecrets(this.#defaultProfileId);
    if (!found?.profile.scep.enabled) throw fail('not_found', 'SCEP is not enabled on the root profile');
    return found;
  }

  /**
   * A PKCSReq or RenewalReq sent again for a transaction already answered with a certificate
   * (RFC 8894 §3.3.1.2, §3.3.3: a client that lost the reply resends the same request, with a
   * new senderNonce): the same signer and the same request content are answered with the
   * certificate issued then, and nothing is issued again. A different request under the same
   * transactionID is a new enrollment; a FAILURE is not repeated (the request is judged anew).
   */
  async #resent(
    profile: CertificateProfile,
    request: ScepRequest,
    inner: Buffer,
  ): Promise<ScepOutcome | null> {
    const stored = await this.#recall(profile, request);
    if (
      stored?.status !== 'SUCCESS' ||
      !stored.certificate ||
      stored.requester !== fingerprint(request.signerCertificate) ||
      stored.request !== fingerprint(inner)
    ) {
      return null;
    }
    this.deps.logger.info(
      { profile_id: profile.id, transaction_id: request.transactionId },
      'SCEP request resent: answered with the certificate of its transaction',
    );
    return { status: 'SUCCESS', certificates: [Buffer.from(stored.certificate, 'base64')] };
  }

  async #enroll(
    profile: CertificateProfile,
    secrets: EnrollmentSecrets,
    issuerId: string,
    request: ScepRequest,
    inner: Buffer,
    client: ScepClient,
    actor: Actor,
    details: Record<string, unknown>,
  ): Promise<Buffer[]> {
    const type = request.messageType as 'PKCSReq' | 'RenewalReq';
    const csr = parseCertificationRequest(inner);
    refusePostQuantumKey(csr.publicKey);
    const renews = type === 'RenewalReq' ? await this.#certificateToRenew(issuerId, request) : undefined;
    const verdict = await checkScepChallenge(
      this.deps,
      {
        profile,
        secrets,
        messageType: type,
        csr,
        transactionId: request.transactionId,
        remoteAddress: client.remoteAddress,
      },
      { ...(this.#mdm ? { mdm: this.#mdm } : {}), cache: this.#challengeCache },
    );
    await this.#spendRateLimit(profile, credentialOf(verdict, request, client));
    const issuance = this.issuance();
    if (!issuance) throw fail('issuer_not_ready', 'no enrollment pipeline is configured');
    const issued = await issuance.enroll(
      actor,
      {
        profileId: profile.id,
        csrDer: csr.der,
        source: 'SCEP',
        ...(renews ? { renewsCertificateId: renews } : {}),
        provenance: {
          scep_transaction_id: request.transactionId,
          scep_route: String(details.route),
          scep_challenge: verdict.method,
        },
      },
      {
        profile,
        // The SCEP event commits with the certificate it reports: one transaction, not two.
        withinTransaction: (tx, result) =>
          this.#auditIn(tx, actor, type, verdict, profile, {
            ...details,
            ...verdict.details,
            outcome: 'success',
            challenge: verdict.method,
            certificate_id: result.certificate.id,
            version_id: result.version.id,
            serial_number: result.version.serial_number,
          }),
      },
    );
    const [certificate] = pemDecodeCertificates(issued.certificatePem);
    await this.#remember(profile, request, { status: 'SUCCESS', certificates: [certificate!] }, inner);
    return [certificate!];
  }

  /** Spends one enrollment of `credential` under `profile`; `rate_limited` with the wait beyond it. */
  async #spendRateLimit(profile: CertificateProfile, credential: string): Promise<void> {
    const limit = this.#rateLimit;
    const store = this.deps.ephemeral;
    if (!limit || !store) return;
    let verdict: Awaited<ReturnType<typeof store.slidingWindowHit>>;
    try {
      verdict = await store.slidingWindowHit(
        `scep:credential:${profile.id}:${credential}`,
        limit.windowMs,
        limit.limit,
      );
    } catch (cause) {
      // An outage of the shared store must not stop enrollment.
      this.deps.logger.warn({ err: cause }, 'SCEP rate limit not checked: the ephemeral store failed');
      return;
    }
    if (verdict.allowed) return;
    const retryAfter = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
    throw fail(
      'rate_limited',
      `too many enrollment requests with this credential; retry after ${retryAfter} s`,
      {
        extra: { retry_after_seconds: retryAfter },
      },
    );
  }

  /**
   * RFC 8894 §3.3.1.2: a RenewalReq is signed by the certificate being renewed. It must be one
   * this service issued under the profile's issuer (the exact certificate of an inventory
   * version), valid now and unrevoked; the new certificate is a new version of it.
   */
  async #certificateToRenew(issuerId: string, request: ScepRequest): Promise<string> {
    const signer = certificateInfo(request.signerCertificate);
    const version = await this.deps.storage.versions.findBySerial(issuerId, signer.serialNumber);
    const refuse = (why: string) => fail('not_found', `renewal refused: ${why}`);
    if (!version) throw refuse('the signing certificate was not issued under this profile');
    const stored = pemDecodeCertificates(version.cert_pem)[0];
    if (
      !stored ||
      stored.length !== request.signerCertificate.length ||
      !timingSafeEqual(stored, Buffer.from(request.signerCertificate))
    ) {
      throw refuse('the signing certificate is not the one in the inventory');
    }
    if (version.revoked_at) throw refuse('the signing certificate is revoked');
    const now = this.deps.clock.now().getTime();
    if (signer.notBefore.getTime() > now || signer.notAfter.getTime() < now) {
      throw fail('time_invalid', 'renewal refused: the signing certificate is not valid now');
    }
    return version.certificate_id;
  }

  async #poll(profile: CertificateProfile, request: ScepRequest): Promise<ScepOutcome> {
    const stored = await this.#recall(profile, request);
    if (!stored || stored.requester !== fingerprint(request.signerCertificate)) {
      throw fail('not_found', `no transaction '${request.transactionId}' of this requester is known`);
    }
    if (stored.status === 'SUCCESS') {
      return { status: 'SUCCESS', certificates: [Buffer.from(stored.certificate ?? '', 'base64')] };
    }
    return { status: 'FAILURE', reason: stored.reason ?? 'invalid_input', message: stored.message ?? '' };
  }

  /** A transaction is its id and its requester: another signer cannot overwrite or read it. */
  #transactionKey(profile: CertificateProfile, request: ScepRequest): string {
    const id = createHash('sha256')
      .update(request.transactionId)
      .update('\0')
      .update(request.signerCertificate)
      .digest('hex');
    return `scep:tx:${profile.id}:${id}`;
  }

  async #remember(
    profile: CertificateProfile,
    request: ScepRequest,
    outcome: ScepOutcome,
    inner?: Buffer,
  ): Promise<void> {
    const store = this.deps.ephemeral;
    if (!store) return;
    const record: StoredTransaction =
      outcome.status === 'SUCCESS'
        ? {
            status: 'SUCCESS',
            certificate: outcome.certificates[0]!.toString('base64'),
            requester: fingerprint(request.signerCertificate),
            ...(inner ? { request: fingerprint(inner) } : {}),
          }
        : {
            status: 'FAILURE',
            reason: outcome.reason,
            message: outcome.message,
            requester: fingerprint(request.signerCertificate),
          };
    const key = this.#transactionKey(profile, request);
    try {
      // The latest request of a transaction is what a poll answers.
      await store.delete(key);
      await store.putIfAbsent(key, JSON.stringify(record), this.#ttlMs);
    } catch (cause) {
      this.deps.logger.warn({ err: cause }, 'SCEP transaction not remembered: the ephemeral store failed');
    }
  }

  async #recall(profile: CertificateProfile, request: ScepRequest): Promise<StoredTransaction | null> {
    const text = await this.deps.ephemeral?.get(this.#transactionKey(profile, request));
    return text ? (JSON.parse(text) as StoredTransaction) : null;
  }

  /** The audit event of a refused request (nothing was stored: a failed append is logged, not thrown). */
  async #audit(
    actor: Actor,
    type: 'PKCSReq' | 'RenewalReq',
    verdict: ScepChallengeVerdict | null,
    profile: CertificateProfile,
    details: Record<string, unknown>,
  ): Promise<void> {
    try {
      await this.#auditIn(this.deps.storage, actor, type, verdict, profile, details);
    } catch (cause) {
      this.deps.logger.error({ err: cause }, 'SCEP request could not be audited');
    }
  }

  async #auditIn(
    tx: Storage,
    actor: Actor,
    type: 'PKCSReq' | 'RenewalReq',
    verdict: ScepChallengeVerdict | null,
    profile: CertificateProfile,
    details: Record<string, unknown>,
  ): Promise<void> {
    const mdm = verdict?.method === 'mdm' || (verdict === null && profile.scep.mdm.enabled);
    const action: ScepAuditAction =
      type === 'PKCSReq'
        ? mdm
          ? 'scep_pkcsreq_mdm'
          : 'scep_pkcsreq'
        : mdm
          ? 'scep_renewalreq_mdm'
          : 'scep_renewalreq';
    await this.audit.record(
      actor,
      { action, category: 'cert_lifecycle', resource_type: 'profile', resource_id: profile.id, details },
      tx,
    );
  }
}

function issuerOf(profile: CertificateProfile): string {
  const issuerId = profile.enrollment.issuer_id;
  if (!issuerId) throw fail('issuer_not_ready', `SCEP profile '${profile.id}' names no issuer`);
  return issuerId;
}

const fingerprint = (der: Uint8Array) => createHash('sha256').update(der).digest('hex');

const cryptoRandom = (length: number): Uint8Array => randomBytes(length);

/**
 * SCEP's replies are encrypted to the requester's key by RSA key transport (RFC 8894 §3.2.2),
 * so a post-quantum key cannot enroll here: it is refused, pointing to the protocols that can.
 */
function refusePostQuantumKey(key: PublicKeyDescription): void {
  if (key.type !== 'ML-DSA' && key.type !== 'SLH-DSA') return;
  throw fail(
    'key_not_allowed',
    `SCEP needs an RSA key (its replies are encrypted to the requester's key, RFC 8894 §3.2.2): enroll ${key.parameterSet} keys over EST, ACME or the REST API`,
    { fields: [{ field: 'csr', message: 'SCEP needs an RSA key' }] },
  );
}
