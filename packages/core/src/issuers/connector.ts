import type { KeyObject } from 'node:crypto';
import type { RevocationReason } from '../domain/certificate.js';
import type { IssuerType, IssuerWithConfig } from '../domain/issuer.js';
import { CertwrightError } from '../errors.js';
import type { IssuedCertificate } from '../pki/certificate.js';
import type { CertificateInfo } from '../pki/certificate-info.js';
import type { SubjectAltName } from '../pki/extensions.js';
import type { DistinguishedName } from '../pki/name.js';
import type { OcspResponder } from '../pki/ocsp-response.js';
import type { ExtendedKeyUsage } from '../pki/oids.js';
import type { KeyCustody } from '../ports/key-custody.js';

/**
 * Issuer connectors: how certwright obtains certificates from a certificate authority. The
 * pipelines (issuance, renewal, revocation) speak only this interface; one implementation
 * exists per issuer type. Connectors never persist anything themselves — storing the result
 * is the pipeline's job, inside its own transaction.
 */

/** What the pipeline asks a CA to certify; profile rules have been applied already. */
export interface IssueRequest {
  subject: DistinguishedName;
  subjectAltNames: readonly SubjectAltName[];
  /** SubjectPublicKeyInfo DER or a key object (server-side generation). */
  publicKey: KeyObject | Uint8Array;
  notBefore: Date;
  notAfter: Date;
  extendedKeyUsage: readonly ExtendedKeyUsage[];
  mustStaple: boolean;
  /**
   * A short-lived certificate (RFC 9608; the profile's `short_lived_validity_hours`): signed
   * with noRevAvail and without CRL or OCSP pointers, and never revoked.
   */
  shortLived?: boolean;
  /**
   * The requester's PKCS#10 DER when one exists (a caller's or an agent's CSR, a protocol
   * enrollment). Connectors that sign locally ignore it; connectors that forward a CSR to a
   * remote CA (ACME finalize, RFC 8555 §7.4) send it as it is, so agent-held keys keep working.
   */
  csrDer?: Uint8Array;
  /**
   * The private key the service generated for this request (server-side key generation), for
   * connectors that must prove possession to a remote CA with a CSR of their own. Never stored
   * or logged by a connector.
   */
  privateKey?: KeyObject;
  /**
   * The version this request replaces (a renewal or re-issue of a managed certificate), so a
   * connector can tell its CA (ACME `replaces`, RFC 9773 §5).
   */
  replacesVersionId?: string;
}

export interface IssueResult extends IssuedCertificate {
  /** CA certificates above the leaf, nearest first, as PEM (what a server sends after the leaf). */
  chainPem: string;
}

export interface ConnectorCapabilities {
  /** The service publishes a CRL for this issuer at /.well-known/pki/crl/{issuer_id}. */
  crl: boolean;
  /** The service answers OCSP for this issuer at /.well-known/pki/ocsp/{issuer_id}. */
  ocsp: boolean;
}

/** How often an issuer's delta CRLs (RFC 5280 §5.2.4) and the complete CRLs under them are rebuilt. */
export interface DeltaCrlSchedule {
  /** One delta's nextUpdate − thisUpdate, and its rebuild period without a revocation. */
  intervalMs: number;
  /** The complete CRL's rebuild period; undefined: the service's CRL refresh. */
  baseIntervalMs?: number;
}

/** What CRL and OCSP need from a CA that the service itself signs for. */
export interface RevocationSigner {
  /** The CA certificate whose serials the CRL and OCSP answers cover. */
  certificate: CertificateInfo;
  signCrl(input: {
    thisUpdate: Date;
    nextUpdate: Date;
    crlNumber: bigint;
    entries?: readonly {
      serial: string;
      revokedAt: Date;
      reason?: RevocationReason;
      invalidityDate?: Date;
    }[];
    /** Entries as stored, already encoded (`encodeCrlEntry`), concatenated in blocks. */
    encodedEntries?: readonly Uint8Array[];
    /** Signs a delta CRL relative to the complete CRL of this number (RFC 5280 §5.2.4). */
    deltaBaseCrlNumber?: bigint;
  }): Buffer;
  /** Present when the issuer publishes delta CRLs: their schedule. */
  deltaCrl?: DeltaCrlSchedule;
  /** A delegated OCSP responder valid at `now` (issued or re-issued as needed). */
  ocspResponder(now: Date): Promise<OcspResponder>;
}

export interface IssuerConnector {
  readonly type: IssuerType;
  readonly issuerId: string;
  readonly capabilities: ConnectorCapabilities;
  issue(request: IssueRequest): Promise<IssueResult>;
  /** Renewal is a fresh issuance with a new serial; connectors with a renewal API use it here. */
  renew(request: IssueRequest): Promise<IssueResult>;
  /**
   * Tells the CA about a revocation. The local CA publishes status from storage, so it has
   * nothing to do; remote CAs (ACME, StepCA …) call their revocation API here.
   */
  revoke(serialNumber: string, reason: RevocationReason): Promise<void>;
  /** CA certificates, issuing CA first, root last, as PEM. */
  caChain(): Promise<string[]>;
  /** Present when the service signs CRLs and OCSP answers for this issuer. */
  readonly revocationSigner?: RevocationSigner;
}

/** How the registry builds a connector; `persistConfig` writes back config the connector changed. */
export interface ConnectorContext {
  issuer: IssuerWithConfig;
  now: () => Date;
  /** Replaces the issuer's sealed config (CA material created on demand, responder re-issue). */
  persistConfig(mutate: (config: Record<string, unknown>) => Record<string, unknown> | null): Promise<void>;
  /** External base URL for CRL distribution points and AIA OCSP URLs; absent → none written. */
  publicBaseUrl?: string;
  /** Whether any certificate was ever issued through this issuer (guards against silent CA rotation). */
  hasIssued?: () => Promise<boolean>;
  /** A certificate this issuer signed, to check re-imported CA material against; null when none. */
  issuedCertificate?: () => Promise<IssuedCertificateSample | null>;
  /** The service's hardware key custody (PKCS#11), for issuers whose keys live on a token. */
  keyCustody?: KeyCustody;
  /** A certificate this issuer issued, by serial (lower-case hex); null when unknown. */
  issuedCertificateBySerial?: (serialNumber: string) => Promise<IssuedCertificateSample | null>;
  /** A certificate version by id, when it was issued by this issuer; null otherwise. */
  issuedVersion?: (versionId: string) => Promise<IssuedCertificateSample | null>;
}

/** A certificate already issued under an issuer (public data only: serial and PEM). */
export interface IssuedCertificateSample {
  serialNumber: string;
  certificatePem: string;
}

/** What a connector's update check sees: the stored config and the one an update would store. */
export interface ConfigUpdateCheck {
  issuerId: string;
  /** The stored config, settings and state, before the update. */
  current: Record<string, unknown>;
  /** The config the update would store: the caller's settings plus the kept state. */
  next: Record<string, unknown>;
  /** A certificate this issuer signed (read inside the update's transaction); null when none. */
  issuedCertificate: () => Promise<IssuedCertificateSample | null>;
  /** The service's hardware key custody, to check a token-held CA being imported. */
  keyCustody?: KeyCustody;
}

export type ConnectorFactory = (context: ConnectorContext) => Promise<IssuerConnector>;

/**
 * Config keys the service itself writes for every issuer it signs CRLs for (the last CRL
 * number, RFC 5280 §5.2.3). Managed state like a connector's own keys: see
 * {@link IssuerConnectorRegistry.managedConfigKeys}.
 */
export const SERVICE_MANAGED_CONFIG_KEYS: readonly string[] = Object.freeze(['crl_number']);

export interface ConnectorRegistration {
  /**
   * Top-level config keys the connector writes itself through `persistConfig` (CA material,
   * responder keys …). They are state, not settings: an issuer update never drops them and a
   * caller may not set them.
   */
  managedConfigKeys?: readonly string[];
  /**
   * Settings the connector reads only while it creates its state (key algorithm, CA name, CA
   * material to import). Once `isProvisioned` holds they no longer do anything, so an update
   * changing them is refused rather than stored and silently ignored.
   */
  creationOnlyConfigKeys?: readonly string[];
  /** Whether a stored config already holds the state the creation-only settings produced. */
  isProvisioned?: (config: Record<string, unknown>) => boolean;
  /**
   * Checks a config update before it is stored; throws a CertwrightError to refuse it (e.g. CA
   * material re-imported for an issuer that lost it must be the CA that issued its certificates).
   */
  checkConfigUpdate?: (check: ConfigUpdateCheck) => Promise<void>;
  /**
   * Creates the CA while its issuer is created and hands the root's private key to the caller
   * (returned once, never stored). Only CAs the service generates have one; absent → the
   * issuer type cannot do it.
   */
  generateWithRootKey?: (
    issuer: { name: string },
    config: Record<string, unknown>,
    now: Date,
  ) => Promise<RootKeyHandOver>;
  /**
   * Checks the caller's settings when an issuer of this type is created or its config replaced;
   * throws a `validation_failed` CertwrightError naming each bad `config.<key>`.
   */
  validateSettings?: (config: Record<string, unknown>) => void;
  /**
   * State that earlier releases stored and this one must not keep (a Local CA's root key):
   * returns the config without it, or null when there is nothing to remove.
   */
  withoutRetiredState?: (config: Record<string, unknown>) => Record<string, unknown> | null;
}

/** A CA generated at issuer creation: the config to store, and the root key to hand over once. */
export interface RootKeyHandOver {
  config: Record<string, unknown>;
  rootPrivateKeyPem: string;
  rootCertificatePem: string;
}

/** Connector factories by issuer type; types without one are refused with a clear error. */
export class IssuerConnectorRegistry {
  readonly #factories = new Map<IssuerType, ConnectorFactory>();
  readonly #managed = new Map<IssuerType, readonly string[]>();
  readonly #registrations = new Map<IssuerType, ConnectorRegistration>();

  register(type: IssuerType, factory: ConnectorFactory, registration: ConnectorRegistration = {}): this {
    this.#factories.set(type, factory);
    this.#managed.set(type, [...(registration.managedConfigKeys ?? [])]);
    this.#registrations.set(type, registration);
    return this;
  }

  supports(type: IssuerType): boolean {
    return this.#factories.has(type);
  }

  /**
   * The config keys of an issuer of `type` that are managed state rather than caller settings:
   * the connector's own (declared at registration) plus the service's CRL state. The one place
   * that knows them; IssuerService keeps them across updates and refuses them as input.
   */
  managedConfigKeys(type: IssuerType): readonly string[] {
    return [...(this.#managed.get(type) ?? []), ...SERVICE_MANAGED_CONFIG_KEYS];
  }

  /**
   * The settings of `type` that only apply while the connector creates its state, when that
   * state already exists in `config`; empty otherwise (nothing created yet, or lost: then they
   * apply again). IssuerService refuses an update changing one of them.
   */
  creationOnlyConfigKeys(type: IssuerType, config: Record<string, unknown>): readonly string[] {
    const registration = this.#registrations.get(type);
    if (!registration?.creationOnlyConfigKeys || !registration.isProvisioned?.(config)) return [];
    return [...registration.creationOnlyConfigKeys];
  }

  /** Runs the connector's own check of a config update, if it declared one. */
  async checkConfigUpdate(type: IssuerType, check: ConfigUpdateCheck): Promise<void> {
    await this.#registrations.get(type)?.checkConfigUpdate?.(check);
  }

  /** Runs the connector's settings check, if it declared one. */
  validateSettings(type: IssuerType, config: Record<string, unknown>): void {
    this.#registrations.get(type)?.validateSettings?.(config);
  }

  /** The registration's root-key generator; undefined when `type` has none. */
  rootKeyGenerator(type: IssuerType): ConnectorRegistration['generateWithRootKey'] {
    return this.#registrations.get(type)?.generateWithRootKey;
  }

  /** `config` without the retired state of `type`; null when it holds none. */
  withoutRetiredState(type: IssuerType, config: Record<string, unknown>): Record<string, unknown> | null {
    return this.#registrations.get(type)?.withoutRetiredState?.(config) ?? null;
  }

  async create(context: ConnectorContext): Promise<IssuerConnector> {
    const factory = this.#factories.get(context.issuer.type);
    if (!factory) {
      throw new CertwrightError(
        'validation_failed',
        `issuer '${context.issuer.id}' is of type ${context.issuer.type}, which this server cannot issue through yet (supported: ${[...this.#factories.keys()].join(', ')})`,
        {
          fields: [
            {
              field: 'issuer_id',
              message: `issuer type ${context.issuer.type} is not supported for issuance`,
            },
          ],
        },
      );
    }
    return factory(context);
  }
}
