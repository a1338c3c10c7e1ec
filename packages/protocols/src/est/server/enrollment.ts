import { createHash, timingSafeEqual } from 'node:crypto';
import {
  type Actor,
  type AuditService,
  type CertificateProfile,
  type EnrollmentService,
  type FailureReason,
  fail,
  isCertwrightError,
  namesToSign,
  protocolProfile,
  publicMessage,
  type ServiceDeps,
  sanKey,
  verifyPassword,
} from '@certwright/core';
import {
  buildEnvelopedData,
  type CertificationRequest,
  createCertificationRequest,
  csrAttributesFor,
  decodeSubjectAltName,
  derReader,
  exportPkcs8Der,
  generateKeyPair,
  type KeyAlgorithm,
  keyIdentifierOf,
  OID,
  parseCertificationRequest,
  parseTrustBundle,
  pemDecodeCertificates,
  readCertificate,
  type SubjectAltName,
  verifyClientChain,
} from '@certwright/core/pki';
import { EstTrustBundles } from '../../shared/trust-bundles.js';

const { children, readBitStringBytes, readRoot } = derReader;

/**
 * EST (RFC 7030, RFC 8951) as a library: which profile a route serves, who the client is
 * (HTTP Basic, TLS client certificate, channel binding), per-principal rate limits, CSR
 * checks and issuance through the one enrollment path, server-side key generation, audit
 * events and per-profile counters. `@certwright/protocols/est` puts HTTP around it; an
 * embedder can call it in-process. docs/protocols/est.md describes the wire contract.
 */

export const EST_OPERATIONS = ['simpleenroll', 'simplereenroll', 'serverkeygen'] as const;
export type EstOperation = (typeof EST_OPERATIONS)[number];

/** The audit codes EST writes (besides `est_bulk_revoke`, written by the bulk service). */
export const EST_AUDIT_ACTIONS = [
  'est_simple_enroll_success',
  'est_simple_enroll_failed',
  'est_simple_reenroll_success',
  'est_simple_reenroll_failed',
  'est_server_keygen_success',
  'est_server_keygen_failed',
  'est_auth_failed_basic',
  'est_auth_failed_mtls',
  'est_auth_failed_channel_binding',
  'est_rate_limited',
  'est_csr_policy_violation',
  'est_trust_anchor_reloaded',
] as const;
export type EstAuditAction = (typeof EST_AUDIT_ACTIONS)[number];

const OUTCOME: Record<EstOperation, { success: EstAuditAction; failed: EstAuditAction }> = {
  simpleenroll: { success: 'est_simple_enroll_success', failed: 'est_simple_enroll_failed' },
  simplereenroll: { success: 'est_simple_reenroll_success', failed: 'est_simple_reenroll_failed' },
  serverkeygen: { success: 'est_server_keygen_success', failed: 'est_server_keygen_failed' },
};

/** What EST needs from the issuance pipeline: the one synchronous enrollment path. */
export type EstIssuance = Pick<EnrollmentService, 'enroll'>;

export interface EstOptions {
  /** The profile of the root routes (`/.well-known/est/…`); default `prof-default`. */
  defaultProfileId?: string;
  /**
   * Enrollment requests one principal (a Basic username or a client certificate) may make per
   * window, per profile, counted in the ephemeral store (shared by every instance on Redis).
   * Default 60 per minute; null: unlimited.
   */
  rateLimit?: { limit: number; windowMs: number } | null;
  /** Reads a trust bundle file; default `fs.readFile(path, 'utf8')`. */
  readTrustBundle?: (path: string) => Promise<string>;
  /** How long a successful Basic check is remembered (scrypt costs ~100 ms); default 5 min. */
  credentialCacheMs?: number;
}

export const DEFAULT_EST_RATE_LIMIT = Object.freeze({ limit: 60, windowMs: 60_000 });

/** What only the connection knows about an EST client. */
export interface EstClient {
  remoteAddress: string;
  /** The request came on a mutual-TLS route (`/.well-known/est-mtls/…`). */
  mtls: boolean;
  /** Credentials from an `Authorization: Basic` header. */
  basic?: { username: string; password: string };
  /** The TLS client certificate chain, DER, leaf first; empty when none was presented. */
  clientCertificateChain: readonly Uint8Array[];
  /** Negotiated TLS protocol (`TLSv1.3`); absent without TLS. */
  tlsProtocol?: string | null;
  /** RFC 5705 exporter of the connection, for RFC 9266 channel binding. */
  exportKeyingMaterial?: (length: number, label: string) => Uint8Array;
}

export interface EstEnrollResult {
  /** The issued certificate, DER. */
  certificate: Buffer;
  /** CA certificates above it, nearest first, DER. */
  chain: Buffer[];
  /** serverkeygen: the PKCS#8 key in CMS EnvelopedData to the CSR's RSA key (DER ContentInfo). */
  envelopedKey?: Buffer;
  certificateId: string;
  versionId: string;
}

/** A client once authenticated. */
export interface EstPrincipal {
  kind: 'basic' | 'certificate';
  /** `basic:<username>` or `certificate:<SHA-256 of the leaf>`; the rate-limit and audit key. */
  id: string;
  /** The leaf of a certificate principal. */
  certificate?: Uint8Array;
}

/** Reasons that mean the profile's rules refused the CSR (est_csr_policy_violation). */
const POLICY_REASONS = new Set<FailureReason>([
  'key_rejected',
  'key_not_allowed',
  'signature_algorithm_not_allowed',
  'name_rejected',
  'name_not_allowed',
  'names_mismatch',
  'csr_attribute_missing',
  'eku_not_allowed',
  'extension_not_allowed',
  'validity_not_allowed',
]);

/** RFC 9266 §2: the exporter label of the tls-exporter channel binding, 32 bytes, no context. */
export const TLS_EXPORTER_LABEL = 'EXPORTER-Channel-Binding';

/** Counter names of `stats()`, in the order shown: one per audit code EST writes per profile. */
export const EST_COUNTERS = EST_AUDIT_ACTIONS.map((a) => a.slice('est_'.length));

export interface EstProfileStats {
  profile_id: string;
  name: string;
  path_id: string | null;
  enabled: boolean;
  server_keygen: boolean;
  mtls_trust_bundle_path: string | null;
  trust_anchors_loaded_at: string | null;
  counters: Record<string, number>;
}

export class EstService {
  readonly #trust: EstTrustBundles;
  readonly #credentialCache = new Map<string, number>();
  readonly #defaultProfileId: string;
  readonly #rateLimit: { limit: number; windowMs: number } | null;
  readonly #cacheMs: number;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly caChain: (issuerId: string) => Promise<string[]>,
    private readonly issuance: () => EstIssuance | undefined,
    options: EstOptions = {},
  ) {
    this.#trust = new EstTrustBundles(options.readTrustBundle);
    this.#defaultProfileId = options.defaultProfileId ?? 'prof-default';
    this.#rateLimit = options.rateLimit === undefined ? DEFAULT_EST_RATE_LIMIT : options.rateLimit;
    this.#cacheMs = options.credentialCacheMs ?? 5 * 60_000;
  }

  get defaultProfileId(): string {
    return this.#defaultProfileId;
  }

  /**
   * The profile a route serves: the default profile for the root routes, otherwise the one
   * whose `est.path_id` is `pathId` (or, for a profile without a path id, its id). A profile
   * with EST disabled is as absent as an unknown one: `not_found`.
   */
  async profile(pathId: string | null): Promise<CertificateProfile> {
    return protocolProfile(this.deps.storage, 'est', pathId, this.#defaultProfileId);
  }

  /** The CA certificates of the profile's issuer, issuing CA first, DER (`/cacerts`). */
  async caCertificates(pathId: string | null): Promise<Buffer[]> {
    const profile = await this.profile(pathId);
    return pemDecodeCertificates((await this.caChain(this.#issuerOf(profile))).join(''));
  }

  /** CsrAttrs DER for `/csrattrs`; null when the profile requires no attribute. */
  async csrAttributes(pathId: string | null): Promise<Buffer | null> {
    const profile = await this.profile(pathId);
    const { der, dropped } = csrAttributesFor(profile.required_csr_attributes);
    if (dropped.length > 0) {
      this.deps.logger.warn(
        { profile_id: profile.id, dropped },
        'EST csrattrs: required CSR attributes with no known OID were left out',
      );
    }
    return der;
  }

  /**
   * One enrollment request: authenticates the client, spends its rate limit, checks the CSR
   * (and for re-enrollment the certificate being renewed), issues, and for serverkeygen
   * generates and wraps the key. Every outcome is audited. Failures are typed: `not_found`
   * (unknown profile, serverkeygen off), `unauthenticated` (Basic missing or wrong),
   * `not_permitted` (client certificate or channel binding refused), `rate_limited`
   * (`extra.retry_after_seconds`), the CSR's own reasons, and the issuance pipeline's.
   */
  async enroll(
    pathId: string | null,
    operation: EstOperation,
    client: EstClient,
    body: Uint8Array,
  ): Promise<EstEnrollResult> {
    const profile = await this.profile(pathId);
    if (operation === 'serverkeygen' && !profile.est.server_keygen) {
      throw fail('not_found', 'server-side key generation is not enabled on this EST profile');
    }
    const principal = await this.#authenticate(profile, operation, client);
    const actor: Actor = { type: 'user', id: `est:${principal.id}` };
    await this.#spendRateLimit(profile, principal, actor);
    const outcome = OUTCOME[operation];
    const details: Record<string, unknown> = {
      principal: principal.id,
      route: client.mtls ? 'est-mtls' : 'est',
      remote_address: client.remoteAddress,
    };
    try {
      const csr = parseCertificationRequest(body);
      this.#checkChannelBinding(profile, csr, client);
      const renews =
        operation === 'simplereenroll' ? await this.#certificateToRenew(profile, client, csr) : undefined;
      const result =
        operation === 'serverkeygen'
          ? await this.#serverKeygen(profile, csr, actor, details)
          : await this.#issue(profile, csr.der, actor, details, renews);
      await this.#record(actor, outcome.success, profile, 'cert_lifecycle', {
        ...details,
        certificate_id: result.certificateId,
        version_id: result.versionId,
        serial_number: readCertificate(result.certificate).serialNumber,
      });
      return result;
    } catch (error) {
      await this.#failed(actor, profile, operation, details, error);
      throw error;
    }
  }

  /** Counters per EST profile (twelve, named after the audit codes), from the audit trail. */
  async stats(): Promise<EstProfileStats[]> {
    const out: EstProfileStats[] = [];
    for (let page = 1; ; page++) {
      const { items, total } = await this.deps.storage.profiles.list({ page, perPage: 200 });
      for (const p of items) {
        if (!p.est.enabled && p.id !== this.#defaultProfileId) continue;
        const counters: Record<string, number> = {};
        for (const action of EST_AUDIT_ACTIONS) {
          const result = await this.deps.storage.audit.list({
            action,
            resource_id: p.id,
            page: 1,
            perPage: 1,
          });
          counters[action.slice('est_'.length)] = result.total;
        }
        const loaded = this.#trust.loadedAt(p.id);
        out.push({
          profile_id: p.id,
          name: p.name,
          path_id: p.est.path_id,
          enabled: p.est.enabled,
          server_keygen: p.est.server_keygen,
          mtls_trust_bundle_path: p.est.mtls_trust_bundle_path,
          trust_anchors_loaded_at: loaded ? loaded.toISOString() : null,
          counters,
        });
      }
      if (page * 200 >= total) break;
    }
    return out;
  }

  /**
   * Re-reads the mutual-TLS trust bundle of one EST profile (by path id; null: the default
   * profile) or of every EST profile that names one. A file that cannot be read or parsed
   * leaves the anchors in force and fails with its reason; each success is audited
   * `est_trust_anchor_reloaded`.
   */
  async reloadTrust(
    actor: Actor,
    pathId?: string | null,
  ): Promise<{ profile_id: string; path: string; anchors: number }[]> {
    const profiles =
      pathId === undefined ? await this.#profilesWithBundles() : [await this.profile(pathId ?? null)];
    const reloaded: { profile_id: string; path: string; anchors: number }[] = [];
    for (const profile of profiles) {
      const path = profile.est.mtls_trust_bundle_path;
      if (!path) {
        throw fail('invalid_state', `EST profile '${profile.id}' names no mutual-TLS trust bundle`);
      }
      let anchors: number;
      try {
        anchors = (await this.#trust.reload(profile.id, path, this.deps.clock.now())).anchors.length;
      } catch (cause) {
        this.deps.logger.error({ err: cause, profile_id: profile.id }, 'EST trust bundle reload failed');
        if (!isCertwrightError(cause)) throw cause;
        throw fail(
          cause.code === 'internal' ? 'unavailable' : cause.reason,
          `the trust bundle of EST profile '${profile.id}' was not reloaded (the previous anchors stay in force): ${publicMessage(cause)}`,
          { cause, extra: { est_failure: 'trust_reload' } },
        );
      }
      await this.#record(actor, 'est_trust_anchor_reloaded', profile, 'config', { path, anchors });
      reloaded.push({ profile_id: profile.id, path, anchors });
    }
    return reloaded;
  }

  // -------------------------------------------------------------------------------------------

  async #profilesWithBundles(): Promise<CertificateProfile[]> {
    const out: CertificateProfile[] = [];
    for (let page = 1; ; page++) {
      const { items, total } = await this.deps.storage.profiles.list({ page, perPage: 200 });
      out.push(...items.filter((p) => p.est.enabled && p.est.mtls_trust_bundle_path));
      if (page * 200 >= total) return out;
    }
  }

  #issuerOf(profile: CertificateProfile): string {
    const issuerId = profile.enrollment.issuer_id;
    if (!issuerId) throw fail('issuer_not_ready', `EST profile '${profile.id}' names no issuer`);
    return issuerId;
  }

  async #authenticate(
    profile: CertificateProfile,
    operation: EstOperation,
    client: EstClient,
  ): Promise<EstPrincipal> {
    const anonymous: Actor = { type: 'anonymous', id: `est:${client.remoteAddress}` };
    const route = client.mtls ? 'est-mtls' : 'est';
    if (client.mtls) {
      // The mutual-TLS routes: the chain must lead to the profile's own trust bundle.
      try {
        const path = profile.est.mtls_trust_bundle_path;
        if (!path)
          throw fail('not_permitted', 'this EST profile accepts no client certificates (no trust bundle)');
        if (client.clientCertificateChain.length === 0) {
          throw fail('not_permitted', 'a TLS client certificate is required on this route');
        }
        let bundle: Awaited<ReturnType<EstTrustBundles['get']>>;
        try {
          bundle = await this.#trust.get(profile.id, path, this.deps.clock.now());
        } catch (cause) {
          this.deps.logger.error({ err: cause, profile_id: profile.id }, 'EST trust bundle cannot be loaded');
          throw fail('not_permitted', 'client certificates cannot be checked now (no trust anchors loaded)', {
            cause,
          });
        }
        bundle.verify(client.clientCertificateChain, { now: this.deps.clock.now() });
      } catch (error) {
        await this.#record(anonymous, 'est_auth_failed_mtls', profile, 'auth', {
          route,
          operation,
          remote_address: client.remoteAddress,
          reason: publicMessage(error),
        });
        throw asNotPermitted(error);
      }
      return certificatePrincipal(client.clientCertificateChain[0]!);
    }
    if (operation === 'simplereenroll') {
      // RFC 7030 §4.2.2: the certificate being renewed authenticates the client; it is
      // checked with the CSR in #certificateToRenew.
      if (client.clientCertificateChain.length === 0) {
        await this.#record(anonymous, 'est_auth_failed_mtls', profile, 'auth', {
          route,
          operation,
          remote_address: client.remoteAddress,
          reason: 'no client certificate',
        });
        throw fail('not_permitted', 're-enrollment requires the TLS client certificate being renewed');
      }
      return certificatePrincipal(client.clientCertificateChain[0]!);
    }
    const basic = client.basic;
    const ok = basic ? await this.#checkBasic(profile, basic.username, basic.password) : false;
    if (!ok) {
      await this.#record(anonymous, 'est_auth_failed_basic', profile, 'auth', {
        route,
        operation,
        remote_address: client.remoteAddress,
        ...(basic ? { username: basic.username.slice(0, 128) } : { reason: 'no credentials' }),
      });
      throw fail('unauthenticated', 'HTTP Basic credentials are required');
    }
    return { kind: 'basic', id: `basic:${basic!.username}` };
  }

  async #checkBasic(profile: CertificateProfile, username: string, password: string): Promise<boolean> {
    if (username.length > 128 || password.length > 1024) return false;
    const found = await this.deps.storage.profiles.getWithSecrets(profile.id);
    const stored = parseCredentials(found?.secrets.est?.basic_credentials);
    const match = stored.find((c) => c.username === username);
    const hash = match?.password_hash ?? 'none';
    const cacheKey = createHash('sha256')
      .update(`${profile.id}\0${username}\0${password}\0${hash}`)
      .digest('base64');
    const now = this.deps.clock.now().getTime();
    const cached = this.#credentialCache.get(cacheKey);
    if (match && cached !== undefined && cached > now) return true;
    // An unknown user costs a check too, so timing does not tell which names exist.
    const ok = (await verifyPassword(password, hash)) && match !== undefined;
    if (ok) {
      if (this.#credentialCache.size >= 1000) this.#credentialCache.clear();
      this.#credentialCache.set(cacheKey, now + this.#cacheMs);
    }
    return ok;
  }

  async #spendRateLimit(profile: CertificateProfile, principal: EstPrincipal, actor: Actor): Promise<void> {
    const limit = this.#rateLimit;
    const store = this.deps.ephemeral;
    if (!limit || !store) return;
    let verdict: Awaited<ReturnType<typeof store.slidingWindowHit>>;
    try {
      verdict = await store.slidingWindowHit(
        `est:principal:${profile.id}:${principal.id}`,
        limit.windowMs,
        limit.limit,
      );
    } catch (cause) {
      // An outage of the shared store must not stop enrollment.
      this.deps.logger.warn({ err: cause }, 'EST rate limit not checked: the ephemeral store failed');
      return;
    }
    if (verdict.allowed) return;
    const retryAfter = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
    await this.#record(actor, 'est_rate_limited', profile, 'auth', {
      principal: principal.id,
      retry_after_seconds: retryAfter,
    });
    throw fail(
      'rate_limited',
      `too many enrollment requests from ${principal.id}; retry after ${retryAfter} s`,
      {
        extra: { retry_after_seconds: retryAfter },
      },
    );
  }

  /** RFC 9266 tls-exporter in challengePassword (RFC 7030 §3.5 carries tls-unique the same way). */
  #checkChannelBinding(profile: CertificateProfile, csr: CertificationRequest, client: EstClient): void {
    if (!profile.est.require_channel_binding) return;
    const refuse = (why: string) =>
      fail('not_permitted', `channel binding failed: ${why}`, { extra: { est_failure: 'channel_binding' } });
    if (client.tlsProtocol !== 'TLSv1.3' || !client.exportKeyingMaterial) {
      throw refuse('this profile requires TLS 1.3 channel binding');
    }
    if (csr.challengePassword === undefined) throw refuse('the CSR carries no challengePassword');
    const expected = Buffer.from(client.exportKeyingMaterial(32, TLS_EXPORTER_LABEL));
    const given = Buffer.from(csr.challengePassword.trim(), 'base64');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw refuse('the challengePassword is not the tls-exporter value of this connection');
    }
  }

  /**
   * RFC 7030 §4.2.2: the client certificate must be one this service issued under the
   * profile's issuer, unrevoked, and the CSR's subject and subjectAltName must be the same.
   * The new certificate is a new version of the same managed certificate.
   */
  async #certificateToRenew(
    profile: CertificateProfile,
    client: EstClient,
    csr: CertificationRequest,
  ): Promise<string> {
    const issuerId = this.#issuerOf(profile);
    const refuse = (why: string) => fail('not_permitted', `re-enrollment refused: ${why}`);
    const anchors = parseTrustBundle((await this.caChain(issuerId)).join(''));
    let leaf: ReturnType<typeof readCertificate>;
    try {
      leaf = verifyClientChain(client.clientCertificateChain, anchors, { now: this.deps.clock.now() }).leaf;
    } catch (error) {
      throw refuse(`the client certificate was not issued by this profile's CA (${publicMessage(error)})`);
    }
    const version = await this.deps.storage.versions.findBySerial(issuerId, leaf.serialNumber);
    if (!version) throw refuse('the client certificate is not in the inventory');
    if (version.revoked_at) throw refuse('the client certificate is revoked');
    // certwright certifies the common name only, so that is the subject to compare.
    if (commonNameOf(leaf.subject.rdns) !== commonNameOf(csr.subject.rdns)) {
      throw refuse('the CSR subject differs from the certificate being renewed');
    }
    if (!sameNames(leaf, csr)) {
      throw refuse('the CSR subjectAltName differs from the certificate being renewed');
    }
    return version.certificate_id;
  }

  async #issue(
    profile: CertificateProfile,
    csrDer: Uint8Array,
    actor: Actor,
    details: Record<string, unknown>,
    renewsCertificateId?: string,
  ): Promise<EstEnrollResult> {
    const issuance = this.issuance();
    if (!issuance) throw fail('issuer_not_ready', 'no enrollment pipeline is configured');
    const issued = await issuance.enroll(
      actor,
      {
        profileId: profile.id,
        csrDer,
        source: 'EST',
        ...(renewsCertificateId ? { renewsCertificateId } : {}),
        provenance: { est_principal: String(details.principal), est_route: String(details.route) },
      },
      { profile },
    );
    const [certificate] = pemDecodeCertificates(issued.certificatePem);
    return {
      certificate: certificate!,
      chain: issued.chainPem.flatMap((pem) => pemDecodeCertificates(pem)),
      certificateId: issued.certificate.id,
      versionId: issued.version.id,
    };
  }

  /**
   * RFC 7030 §4.4: the CSR's RSA key is only the key-transport recipient; the server makes the
   * key (the profile's algorithm, RSA-2048 by default), issues for a CSR it signs with it (same
   * subject, names and requested extensions), and returns the PKCS#8 key enveloped with
   * AES-256-CBC and RSA PKCS#1 v1.5 key transport. The plaintext PKCS#8 is wiped.
   */
  async #serverKeygen(
    profile: CertificateProfile,
    csr: CertificationRequest,
    actor: Actor,
    details: Record<string, unknown>,
  ): Promise<EstEnrollResult> {
    if (csr.publicKey.type !== 'RSA') {
      throw fail(
        'key_not_allowed',
        'serverkeygen needs an RSA public key in the CSR: it is the key-transport recipient of the generated key',
        {
          fields: [{ field: 'csr', message: 'the public key must be RSA (key encipherment)' }],
          extra: { est_failure: 'key_encipherment_required' },
        },
      );
    }
    const algorithm = serverKeygenAlgorithm(profile);
    const { privateKey } = await generateKeyPair(algorithm);
    const generatedCsr = createCertificationRequest({
      subject: csr.subject.rdns.map((rdn) => rdn.map((a) => ({ type: a.oid, value: a.value }))),
      privateKey,
      subjectAltNames: csr.subjectAltNames.filter((n): n is SubjectAltName => 'value' in n),
      extensions: csr.extensions.filter((e) => e.oid !== OID.subjectAltName),
    });
    const result = await this.#issue(profile, generatedCsr, actor, { ...details, key_algorithm: algorithm });
    const pkcs8 = exportPkcs8Der(privateKey);
    try {
      const keyId = keyIdentifierOfSpki(csr.spki);
      result.envelopedKey = buildEnvelopedData({
        content: pkcs8,
        recipient: { spki: csr.spki, subjectKeyIdentifier: keyId },
        contentEncryption: 'aes-256-cbc',
      });
    } finally {
      pkcs8.fill(0);
    }
    return result;
  }

  async #failed(
    actor: Actor,
    profile: CertificateProfile,
    operation: EstOperation,
    details: Record<string, unknown>,
    error: unknown,
  ): Promise<void> {
    const reason = isCertwrightError(error) ? error.reason : 'internal';
    const failure = { ...details, reason, error: publicMessage(error) };
    try {
      const sentinel = isCertwrightError(error) ? error.extra.est_failure : undefined;
      if (sentinel === 'channel_binding') {
        await this.#record(actor, 'est_auth_failed_channel_binding', profile, 'auth', failure);
      }
      // The serverkeygen sentinels are about the request's shape, not the profile's rules.
      if (POLICY_REASONS.has(reason) && sentinel === undefined) {
        await this.#record(actor, 'est_csr_policy_violation', profile, 'cert_lifecycle', failure);
      }
      await this.#record(actor, OUTCOME[operation].failed, profile, 'cert_lifecycle', failure);
    } catch (cause) {
      this.deps.logger.error({ err: cause }, 'EST failure could not be audited');
    }
  }

  #record(
    actor: Actor,
    action: EstAuditAction,
    profile: CertificateProfile,
    category: 'auth' | 'cert_lifecycle' | 'config',
    details: Record<string, unknown>,
  ) {
    return this.audit.record(actor, {
      action,
      category,
      resource_type: 'profile',
      resource_id: profile.id,
      details,
    });
  }
}

function certificatePrincipal(leaf: Uint8Array): EstPrincipal {
  return {
    kind: 'certificate',
    id: `certificate:${createHash('sha256').update(leaf).digest('hex')}`,
    certificate: leaf,
  };
}

/** A refused client certificate is 403 on the wire; an internal failure stays what it is. */
function asNotPermitted(error: unknown): unknown {
  if (!isCertwrightError(error) || error.reason === 'not_permitted' || error.code === 'internal')
    return error;
  return fail('not_permitted', error.message, { cause: error });
}

function parseCredentials(json: string | undefined): { username: string; password_hash: string }[] {
  if (!json) return [];
  try {
    const parsed = JSON.parse(json) as unknown;
    return Array.isArray(parsed) ? (parsed as { username: string; password_hash: string }[]) : [];
  } catch {
    return [];
  }
}

const commonNameOf = (rdns: readonly { oid: string; value: string }[][]): string | null =>
  rdns.flat().find((a) => a.oid === '2.5.4.3')?.value ?? null;

/**
 * Whether the CSR asks for exactly the names the certificate has, read as enrollment reads
 * them (the common name joins the SANs when it is a host name, DNS names lower-cased).
 */
function sameNames(leaf: ReturnType<typeof readCertificate>, csr: CertificationRequest): boolean {
  const ext = leaf.extensions.find((e) => e.oid === OID.subjectAltName);
  const have = new Set((ext ? decodeSubjectAltName(ext.value) : []).map((n) => sanKey(n as SubjectAltName)));
  let want: Set<string>;
  try {
    const requested = csr.subjectAltNames.filter((n): n is SubjectAltName => n.type !== 'other');
    want = new Set(namesToSign(commonNameOf(csr.subject.rdns), requested).map(sanKey));
  } catch {
    return false;
  }
  return have.size === want.size && [...want].every((n) => have.has(n));
}

/** The subject key identifier (RFC 5280 §4.2.1.2 method 1) of an SPKI, for the envelope's recipient. */
function keyIdentifierOfSpki(spki: Uint8Array): Buffer {
  const [, bitsNode] = children(spki, readRoot(spki));
  return keyIdentifierOf(readBitStringBytes(spki, bitsNode, 'subjectPublicKey'));
}

/**
 * The algorithm of a server-generated key: RSA-2048 unless the profile says otherwise — its
 * smallest allowed RSA size that certwright generates, else its first ECDSA curve or Ed25519.
 */
export function serverKeygenAlgorithm(profile: CertificateProfile): KeyAlgorithm {
  const allowed = profile.allowed_key_algorithms;
  if (allowed.length === 0) return 'RSA-2048';
  const rsa = allowed.find((a) => a.algorithm === 'RSA');
  if (rsa && rsa.algorithm === 'RSA') {
    const size = [...rsa.sizes].sort((a, b) => a - b).find((s) => s === 2048 || s === 3072 || s === 4096);
    if (size) return `RSA-${size}` as KeyAlgorithm;
  }
  for (const a of allowed) {
    if (a.algorithm === 'ECDSA') {
      if (a.curves.includes('P-256')) return 'ECDSA-P256';
      if (a.curves.includes('P-384')) return 'ECDSA-P384';
    }
    if (a.algorithm === 'Ed25519') return 'Ed25519';
  }
  throw fail(
    'key_not_allowed',
    `profile '${profile.name}' allows no key algorithm certwright can generate (RSA 2048/3072/4096, ECDSA P-256/P-384, Ed25519)`,
    { extra: { est_failure: 'unsupported_algorithm' } },
  );
}
