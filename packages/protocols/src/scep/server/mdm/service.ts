import {
  type Actor,
  type AuditService,
  type CertificateProfile,
  fail,
  isCertwrightError,
  protocolProfile,
  publicMessage,
  type ServiceDeps,
} from '@certwright/core';
import type { CertificationRequest } from '@certwright/core/pki';
import type { ScepMdmVerifier } from '../challenge.js';
import type { CsrNames } from './claim-match.js';
import { type MdmChallengeFailure, type MdmChallengeStatus, mdmFailure } from './status.js';
import type { MdmAnchorSet } from './trust-anchors.js';
import {
  type MdmChallengeResult,
  type MdmChallengeSettings,
  MdmChallengeVerifier,
  type MdmVerifierOptions,
} from './verifier.js';

/**
 * The device-management integration of the SCEP server as a service: which profile a path id
 * names, checking a CSR's challenge against the profile's settings, the per-profile counters,
 * the trust anchors an operator sees, and reloading them. The SCEP handler calls `check` where
 * it checks a challenge password; the admin routes call the rest.
 */

export interface ScepMdmOptions extends MdmVerifierOptions {
  /** The profile of the root SCEP routes; default `prof-default`. */
  defaultProfileId?: string;
}

/** The audit code written for the successful reload of a profile's MDM trust file. */
export const SCEP_MDM_TRUST_RELOADED = 'scep_mdm_trust_reloaded';

export interface MdmTrustAnchorView {
  subject: string;
  not_after: string;
  /** `x5t#S256` of the certificate: what a challenge names it by. */
  sha256: string;
}

/** What an operator sees of a profile's integration (the `mdm` member of a SCEP profile snapshot). */
export interface ScepMdmSnapshot {
  counters: Record<MdmChallengeStatus, number>;
  /** The anchor that expires first (the one to renew next); null when none are loaded. */
  trust_anchor_subject: string | null;
  trust_anchor_not_after: string | null;
  trust_anchors: MdmTrustAnchorView[];
  trust_anchors_loaded_at: string | null;
  trust_bundle_path: string | null;
  audience: string;
  max_lifetime_seconds: number;
  require_compliance: boolean;
}

export interface ScepMdmProfileStats {
  profile_id: string;
  name: string;
  path_id: string | null;
  scep_enabled: boolean;
  counters: Record<MdmChallengeStatus, number>;
}

export interface ScepMdmReloaded {
  profile_id: string;
  path: string;
  anchors: MdmTrustAnchorView[];
}

export class ScepMdmService {
  readonly verifier: MdmChallengeVerifier;
  readonly #defaultProfileId: string;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    options: ScepMdmOptions = {},
  ) {
    if (!deps.ephemeral) throw fail('config_invalid', 'the SCEP MDM integration needs an ephemeral store');
    this.verifier = new MdmChallengeVerifier(
      { clock: deps.clock, ephemeral: deps.ephemeral, logger: deps.logger },
      options,
    );
    this.#defaultProfileId = options.defaultProfileId ?? 'prof-default';
  }

  get defaultProfileId(): string {
    return this.#defaultProfileId;
  }

  /**
   * The SCEP profile a path id names (null: the root profile): its `scep.path_id`, or its id
   * when it has none. A profile with SCEP disabled is as absent as an unknown one: `not_found`.
   */
  async profile(pathId: string | null): Promise<CertificateProfile> {
    return protocolProfile(this.deps.storage, 'scep', pathId, this.#defaultProfileId);
  }

  /**
   * Checks the signed challenge in a CSR's challengePassword against the profile's MDM
   * settings, and counts the outcome. The result's status says what happened; callers that
   * refuse on failure use {@link ScepMdmService.require}.
   */
  check(
    profile: CertificateProfile,
    csr: CertificationRequest,
    remoteAddress: string,
  ): Promise<MdmChallengeResult> {
    return this.verifier.verify({
      profileId: profile.id,
      settings: settingsOf(profile),
      challenge: csr.challengePassword,
      csr: csrNames(csr),
      remoteAddress,
    });
  }

  /**
   * `check`, refusing every status but success with a typed error whose `extra.mdm_status`
   * names the label; its reason is one SCEP answers with failInfo badRequest.
   */
  async require(
    profile: CertificateProfile,
    csr: CertificationRequest,
    remoteAddress: string,
  ): Promise<MdmChallengeResult> {
    const result = await this.check(profile, csr, remoteAddress);
    if (result.status === 'success') return result;
    throw mdmFailure(
      result.status as MdmChallengeFailure,
      `challenge refused (${result.status}): ${result.message}`,
    );
  }

  /**
   * The verifier the SCEP service calls for a profile with `scep.mdm.enabled` (PKCSReq and
   * RenewalReq alike: a renewal needs a fresh challenge too, so the MDM still vouches for the
   * device). A refusal throws the typed failure of {@link ScepMdmService.require}, which the
   * SCEP layer answers with CertRep FAILURE badRequest; the audit details of a success name the
   * challenge (issuer, jti, signer), never the token.
   */
  scepVerifier(): ScepMdmVerifier {
    return async (request) => {
      const result = await this.require(request.profile, request.csr, request.remoteAddress);
      const claims = result.claims!;
      return {
        method: 'mdm',
        details: {
          mdm_status: result.status,
          mdm_issuer: claims.iss,
          mdm_jti: claims.jti,
          ...(claims.sub ? { mdm_subject: claims.sub } : {}),
          ...(result.signer ? { mdm_signer: result.signer } : {}),
        },
      };
    };
  }

  /** Per-status counters of every profile with the integration enabled. */
  async stats(): Promise<ScepMdmProfileStats[]> {
    const out: ScepMdmProfileStats[] = [];
    for (const p of await this.#mdmProfiles()) {
      out.push({
        profile_id: p.id,
        name: p.name,
        path_id: p.scep.path_id,
        scep_enabled: p.scep.enabled,
        counters: await this.verifier.counters(p.id),
      });
    }
    return out;
  }

  /**
   * The `mdm` member of a profile's snapshot; undefined when the integration is off. Loads
   * the trust file if no check has yet; a file that cannot be loaded shows as no anchors.
   */
  async snapshot(profile: CertificateProfile): Promise<ScepMdmSnapshot | undefined> {
    const mdm = profile.scep.mdm;
    if (!mdm.enabled) return undefined;
    let set: MdmAnchorSet | undefined = this.verifier.trust.peek(profile.id);
    if (mdm.trust_bundle_path && (!set || set.path !== mdm.trust_bundle_path)) {
      try {
        set = await this.verifier.trust.get(profile.id, mdm.trust_bundle_path, this.deps.clock.now());
      } catch (error) {
        this.deps.logger.warn({ err: error, profile_id: profile.id }, 'MDM trust file cannot be loaded');
      }
    }
    const anchors = set ? viewOf(set) : [];
    const first = [...anchors].sort((a, b) => a.not_after.localeCompare(b.not_after))[0];
    return {
      counters: await this.verifier.counters(profile.id),
      trust_anchor_subject: first?.subject ?? null,
      trust_anchor_not_after: first?.not_after ?? null,
      trust_anchors: anchors,
      trust_anchors_loaded_at: set ? set.loadedAt.toISOString() : null,
      trust_bundle_path: mdm.trust_bundle_path,
      audience: settingsOf(profile).audience ?? `urn:certwright:scep:${profile.id}`,
      max_lifetime_seconds: mdm.max_lifetime_seconds,
      require_compliance: mdm.require_compliance,
    };
  }

  /**
   * Re-reads the MDM trust file of one profile (null: the root profile). `not_found` for an
   * unknown path id, `invalid_state` when the integration is off or names no file; a file that
   * cannot be read or parsed leaves the previous anchors in force and fails with its reason
   * and `extra.scep_mdm_failure: 'trust_reload'`. A success is audited.
   */
  async reloadTrust(actor: Actor, pathId: string | null): Promise<ScepMdmReloaded> {
    const profile = await this.profile(pathId);
    const mdm = profile.scep.mdm;
    if (!mdm.enabled) {
      throw fail(
        'invalid_state',
        `the device-management integration is not enabled on profile '${profile.id}'`,
      );
    }
    const path = mdm.trust_bundle_path;
    if (!path) throw fail('invalid_state', `profile '${profile.id}' names no MDM trust file`);
    let set: MdmAnchorSet;
    try {
      set = await this.verifier.reloadTrust(profile.id, path);
    } catch (cause) {
      this.deps.logger.error({ err: cause, profile_id: profile.id }, 'MDM trust file reload failed');
      if (!isCertwrightError(cause)) throw cause;
      throw fail(
        cause.code === 'internal' ? 'unavailable' : cause.reason,
        `the MDM trust file of profile '${profile.id}' was not reloaded (the previous anchors stay in force): ${publicMessage(cause)}`,
        { cause, extra: { scep_mdm_failure: 'trust_reload' } },
      );
    }
    const anchors = viewOf(set);
    await this.audit.record(actor, {
      action: SCEP_MDM_TRUST_RELOADED,
      category: 'config',
      resource_type: 'profile',
      resource_id: profile.id,
      details: { path, anchors: anchors.map((a) => a.sha256) },
    });
    return { profile_id: profile.id, path, anchors };
  }

  async #mdmProfiles(): Promise<CertificateProfile[]> {
    const out: CertificateProfile[] = [];
    for (let page = 1; ; page++) {
      const { items, total } = await this.deps.storage.profiles.list({ page, perPage: 200 });
      out.push(...items.filter((p) => p.scep.mdm.enabled));
      if (page * 200 >= total) return out;
    }
  }
}

function settingsOf(profile: CertificateProfile): MdmChallengeSettings {
  const { trust_bundle_path, audience, max_lifetime_seconds, require_compliance } = profile.scep.mdm;
  return { trust_bundle_path, audience, max_lifetime_seconds, require_compliance };
}

/** The names of a CSR as the claims are compared with them. */
export function csrNames(csr: Pick<CertificationRequest, 'subject' | 'subjectAltNames'>): CsrNames {
  return {
    commonNames: csr.subject.rdns
      .flat()
      .filter((a) => a.oid === '2.5.4.3')
      .map((a) => a.value),
    subjectAltNames: csr.subjectAltNames,
  };
}

const viewOf = (set: MdmAnchorSet): MdmTrustAnchorView[] =>
  set.signers.map((s) => ({
    subject: s.info.subject.text,
    not_after: s.info.notAfter.toISOString(),
    sha256: s.thumbprint.toString('base64url'),
  }));
