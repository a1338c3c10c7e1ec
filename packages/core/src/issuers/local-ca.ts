import { X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { CertwrightError, fail, validationError } from '../errors.js';
import { SoftwareKeyCustody } from '../key-custody/software.js';
import {
  certificateToPem,
  createSelfSignedCertificate,
  type IssuingAuthority,
  issueCertificate,
  prepareIssuer,
} from '../pki/certificate.js';
import { type CertificateInfo, readCertificate } from '../pki/certificate-info.js';
import { buildCrl } from '../pki/crl.js';
import { KEY_ALGORITHMS, type KeyAlgorithm } from '../pki/keys.js';
import { type OcspResponder, prepareOcspResponder } from '../pki/ocsp-response.js';
import { pemDecodeCertificates } from '../pki/pem.js';
import { isPostQuantumParameterSet } from '../pki/post-quantum.js';
import { assertPostQuantumRuntime } from '../pki/post-quantum-runtime.js';
import type { SigningKey } from '../pki/signing-key.js';
import type { KeyCustody } from '../ports/key-custody.js';
import type {
  ConfigUpdateCheck,
  ConnectorContext,
  IssuedCertificateSample,
  IssueRequest,
  IssueResult,
  IssuerConnector,
  RevocationSigner,
} from './connector.js';
import { deltaCrlSchema, deltaSchedule } from './local-ca-delta.js';
import { certificatePointers, pointerConfigShape } from './local-ca-urls.js';

/**
 * The Local CA: a CA the service runs itself. Its private keys are held by a key custody
 * (`key_custody`, see docs/operations/key-custody.md) and it signs only through that port:
 * `software` (the default) keeps them as PKCS#8 in the issuer's config, `pkcs11` on a token,
 * with only their labels in the config. The config is sealed by storage under the service's
 * encryption key (SecretBox) and no API ever returns it:
 *
 * - imported: `certificate_pem` + `private_key_pem` (PKCS#8) [+ `chain_pem` above it] given at
 *   issuer creation; checked with prepareIssuer on first use and moved under `ca`;
 * - generated on demand: with no material, the first use creates a root and an issuing
 *   intermediate (`key_algorithm`, default ECDSA-P256, any of KEY_ALGORITHMS including ML-DSA and
 *   SLH-DSA; `root_key_algorithm` for a root of another algorithm than the intermediate, a mixed
 *   chain, docs/pki/post-quantum.md; `common_name`, default the issuer name);
 * - generated at creation (`root_private_key: 'return'` on the create request, see
 *   {@link generateLocalCaWithRootKey}): the same, and the root's key is handed to the caller.
 *
 * The root's private key is never stored: once it has signed the intermediate the service has
 * no use for it, and a key that stays online is a key that can leak with the database. It is
 * discarded, or returned once by the create call for offline storage (the only way to sign a
 * new intermediate under the same root later, see docs/operations/ca-rotation.md). Configs
 * written by earlier releases still hold it as `ca.root_key_pem`: {@link withoutRootKey} drops
 * it, at start-up (`IssuerService.removeRetiredState`), on the first connector build and on any
 * issuer update.
 *
 * Path lengths: the root allows one CA below it (pathLenConstraint 1), the intermediate none
 * (0), so the hierarchy is exactly root → intermediate → leaf (RFC 5280 §4.2.1.9).
 *
 * Each Local issuer also has a delegated OCSP responder certificate (id-kp-OCSPSigning +
 * ocsp-nocheck, RFC 6960 §4.2.2.2), short-lived and re-issued before it runs out.
 */

const DAY = 86_400_000;
export const LOCAL_CA_DEFAULTS = {
  rootValidityDays: 3650,
  issuingValidityDays: 1825,
  /** A responder certificate carries ocsp-nocheck, so it cannot be revoked: keep it short. */
  responderValidityDays: 7,
  /** Re-issue the responder certificate once less than this remains. */
  responderRenewBeforeDays: 2,
} as const;

/**
 * The keys this connector writes itself (`ca` after provisioning or import, `ocsp_responder` on
 * each responder re-issue). Registered with the connector so that issuer updates keep them.
 */
export const LOCAL_CA_MANAGED_CONFIG_KEYS: readonly string[] = Object.freeze(['ca', 'ocsp_responder']);

/**
 * The settings read only when the CA is created (generated or imported). Once `ca` exists they
 * change nothing, and an imported key would sit unused in the config: registered with the
 * connector so that issuer updates refuse them then (see {@link localCaIsProvisioned}).
 */
export const LOCAL_CA_CREATION_ONLY_CONFIG_KEYS: readonly string[] = Object.freeze([
  'key_custody',
  'private_key_label',
  'key_algorithm',
  'root_key_algorithm',
  'common_name',
  'root_validity_days',
  'issuing_validity_days',
  'certificate_pem',
  'private_key_pem',
  'chain_pem',
]);

const pem = z
  .string()
  .min(1)
  .max(256 * 1024);
export const localCaConfigSchema = z
  .object({
    certificate_pem: pem.optional(),
    private_key_pem: pem.optional(),
    chain_pem: pem.optional(),
    key_algorithm: z.enum(KEY_ALGORITHMS as [KeyAlgorithm, ...KeyAlgorithm[]]).optional(),
    /** A generated root's algorithm when it differs from the issuing CA's (`key_algorithm`). */
    root_key_algorithm: z.enum(KEY_ALGORITHMS as [KeyAlgorithm, ...KeyAlgorithm[]]).optional(),
    /** Where the CA's keys live: `software` (sealed in this config) or `pkcs11` (a token). */
    key_custody: z.enum(['software', 'pkcs11']).optional(),
    /** Import of a CA whose key is already on the token: the key's label there. */
    private_key_label: z.string().min(1).max(64).optional(),
    common_name: z.string().min(1).max(64).optional(),
    /** A generated root's validity (default 3650 days, at most 100 years). */
    root_validity_days: z.number().int().min(1).max(36_500).optional(),
    /** A generated issuing CA's validity (default 1825 days); at most the root's. */
    issuing_validity_days: z.number().int().min(1).max(36_500).optional(),
    base_url: z.string().url().startsWith('https://').optional(),
    ...pointerConfigShape,
    delta_crl: deltaCrlSchema.optional(),
    ca: z
      .object({
        issuing_cert_pem: pem,
        /** Software custody: the issuing CA's key, PKCS#8 (the config is sealed at rest). */
        issuing_key_pem: pem.optional(),
        /** Token custody: the label of the issuing CA's key on the token. */
        issuing_key_label: z.string().min(1).max(64).optional(),
        /** Token custody: the root's key stays on the token under this label. */
        root_key_label: z.string().min(1).max(64).optional(),
        /** Certificates above the issuing CA, nearest first (empty for a root-only CA). */
        upper_chain_pem: z.string().max(256 * 1024),
        /** Written by earlier releases only; removed by withoutRootKey, never read. */
        root_key_pem: pem.optional(),
      })
      .optional(),
    ocsp_responder: z
      .object({ cert_pem: pem, key_pem: pem.optional(), key_label: z.string().min(1).max(64).optional() })
      .optional(),
  })
  .passthrough();
export type LocalCaConfig = z.infer<typeof localCaConfigSchema>;

function parseConfig(issuerId: string, config: Record<string, unknown>): LocalCaConfig {
  const parsed = localCaConfigSchema.safeParse(config);
  if (!parsed.success) {
    throw new CertwrightError(
      'validation_failed',
      `issuer '${issuerId}' has an invalid Local CA config: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return parsed.data;
}

/**
 * The settings of a new or changed Local issuer, checked when they are given rather than at
 * first use: every known key's type and bounds, and an issuing CA that would outlive its root.
 * Each problem names its `config.<key>`.
 */
export function validateLocalCaSettings(config: Record<string, unknown>): void {
  const parsed = localCaConfigSchema.safeParse(config);
  const fields = parsed.success
    ? []
    : parsed.error.issues.map((i) => ({ field: ['config', ...i.path].join('.'), message: i.message }));
  if (parsed.success) {
    for (const key of ['key_algorithm', 'root_key_algorithm'] as const) {
      const algorithm = parsed.data[key];
      if (algorithm && isPostQuantumParameterSet(algorithm))
        assertPostQuantumRuntime(`a Local CA with ${algorithm} keys`, `config.${key}`);
    }
    const root = parsed.data.root_validity_days ?? LOCAL_CA_DEFAULTS.rootValidityDays;
    const issuing = parsed.data.issuing_validity_days ?? LOCAL_CA_DEFAULTS.issuingValidityDays;
    if (issuing > root) {
      fields.push({
        field: 'config.issuing_validity_days',
        message: `${issuing} days would outlive the root's ${root}; at most ${root}`,
      });
    }
  }
  if (fields.length > 0) throw validationError(fields);
}

const isImport = (config: LocalCaConfig): boolean =>
  config.certificate_pem !== undefined ||
  config.private_key_pem !== undefined ||
  config.private_key_label !== undefined;

/**
 * The custody an issuer's keys live in: a fresh in-memory software custody (its keys come from
 * and go back to the sealed config), or the service's PKCS#11 custody.
 */
export function custodyFor(
  issuerId: string,
  config: LocalCaConfig,
  shared: KeyCustody | undefined,
): KeyCustody {
  if ((config.key_custody ?? 'software') === 'software') return new SoftwareKeyCustody();
  if (shared?.kind !== 'pkcs11') {
    throw fail(
      'issuer_not_ready',
      `issuer '${issuerId}' keeps its keys on a PKCS#11 token, but this server has no PKCS#11 key custody configured (SVC_PKCS11_MODULE, SVC_PKCS11_TOKEN_LABEL, SVC_PKCS11_PIN_FILE)`,
    );
  }
  return shared;
}

/** Loads a stored or imported key reference into its custody and returns its signing handle. */
async function signingKeyOf(
  custody: KeyCustody,
  label: string,
  pem: string | undefined,
): Promise<SigningKey> {
  if (custody instanceof SoftwareKeyCustody) {
    if (pem === undefined)
      throw fail('issuer_not_ready', `the software key '${label}' is missing from the config`);
    custody.importPkcs8(label, pem);
  }
  return custody.signingKey(label);
}

/**
 * Imported material: the CA certificate must be a CA and the key must match it. A software
 * import brings its key (PKCS#8); a token import names the key already on the token.
 */
async function importMaterial(
  issuerId: string,
  config: LocalCaConfig,
  custody: KeyCustody,
): Promise<NonNullable<LocalCaConfig['ca']>> {
  const software = custody instanceof SoftwareKeyCustody;
  const keyField = software ? 'private_key_pem' : 'private_key_label';
  if (!config.certificate_pem || (software ? !config.private_key_pem : !config.private_key_label)) {
    throw new CertwrightError(
      'validation_failed',
      `issuer '${issuerId}': importing a Local CA needs both certificate_pem and ${keyField}`,
    );
  }
  const label = software ? 'import' : config.private_key_label!;
  const key = await signingKeyOf(custody, label, config.private_key_pem);
  prepareIssuer(config.certificate_pem, key); // throws with a clear reason when not a CA or not its key
  const upper = config.chain_pem ? pemDecodeCertificates(config.chain_pem) : [];
  return {
    issuing_cert_pem: certificateToPem(pemDecodeCertificates(config.certificate_pem)[0]!),
    ...(software
      ? { issuing_key_pem: (custody as SoftwareKeyCustody).exportPkcs8(label) }
      : { issuing_key_label: label }),
    upper_chain_pem: upper.map((der) => certificateToPem(der)).join(''),
  };
}

/** A fresh token label for one of an issuer's keys (unique, so racing creators never collide). */
const keyLabel = (issuerId: string, role: string, now: Date): string =>
  `certwright ${issuerId.slice(0, 36)} ${role} ${now.getTime().toString(36)}`;

interface GeneratedCa {
  /** What the issuer's config keeps: the intermediate, its key and the root certificate. */
  ca: NonNullable<LocalCaConfig['ca']>;
  /** Software custody: the root's key, handed to the caller or dropped, never stored. */
  rootKeyPem: string | undefined;
  rootCertificatePem: string;
}

/**
 * Creates the root and the issuing CA in `custody`. Software keys come out as PKCS#8 for the
 * sealed config; token keys are created non-extractable and only their labels are kept (the
 * root's stays on the token, unused, for a later intermediate).
 */
async function generateMaterial(
  issuer: { id: string; name: string },
  config: LocalCaConfig,
  now: Date,
  custody: KeyCustody,
): Promise<GeneratedCa> {
  const algorithm = config.key_algorithm ?? 'ECDSA-P256';
  const rootAlgorithm = config.root_key_algorithm ?? algorithm;
  const cn = (config.common_name ?? issuer.name).slice(0, 48);
  const notBefore = new Date(now.getTime() - 60_000);
  const software = custody instanceof SoftwareKeyCustody;
  const rootLabel = software ? 'root' : keyLabel(issuer.id, 'root', now);
  const issuingLabel = software ? 'issuing' : keyLabel(issuer.id, 'issuing', now);
  await custody.createKey({ algorithm: rootAlgorithm, label: rootLabel, extractable: software });
  const rootKey = { privateKey: await custody.signingKey(rootLabel) };
  const root = createSelfSignedCertificate(
    {
      subject: [
        { type: 'O', value: 'certwright' },
        { type: 'CN', value: `${cn} Root CA` },
      ],
      notBefore,
      notAfter: new Date(
        now.getTime() + (config.root_validity_days ?? LOCAL_CA_DEFAULTS.rootValidityDays) * DAY,
      ),
      // One CA below the root: the intermediate (or a later one it signs offline), then leaves.
      basicConstraints: { ca: true, pathLength: 1 },
    },
    rootKey.privateKey,
  );
  const rootAuthority = prepareIssuer(root.der, rootKey.privateKey);
  await custody.createKey({ algorithm, label: issuingLabel, extractable: software });
  const issuingKey = await custody.signingKey(issuingLabel);
  const issuing = issueCertificate(
    {
      subject: [
        { type: 'O', value: 'certwright' },
        { type: 'CN', value: `${cn} Issuing CA` },
      ],
      publicKey: issuingKey.spki,
      notBefore,
      notAfter: new Date(
        now.getTime() + (config.issuing_validity_days ?? LOCAL_CA_DEFAULTS.issuingValidityDays) * DAY,
      ),
      basicConstraints: { ca: true, pathLength: 0 },
    },
    rootAuthority,
  );
  const soft = software ? (custody as SoftwareKeyCustody) : undefined;
  return {
    ca: {
      issuing_cert_pem: certificateToPem(issuing.der),
      ...(soft
        ? { issuing_key_pem: soft.exportPkcs8(issuingLabel) }
        : { issuing_key_label: issuingLabel, root_key_label: rootLabel }),
      upper_chain_pem: certificateToPem(root.der),
    },
    rootKeyPem: soft?.exportPkcs8(rootLabel),
    rootCertificatePem: certificateToPem(root.der),
  };
}

/**
 * The config without a root key stored by an earlier release (`ca.root_key_pem`); null when
 * there is none, so callers write only when something must go.
 */
export function withoutRootKey(config: Record<string, unknown>): Record<string, unknown> | null {
  const ca = config.ca;
  if (!ca || typeof ca !== 'object' || !('root_key_pem' in ca)) return null;
  const { root_key_pem: _dropped, ...kept } = ca as Record<string, unknown>;
  return { ...config, ca: kept };
}

/** Whether a Local issuer's config still lacks CA material (first use creates or imports it). */
export const needsProvisioning = (config: Record<string, unknown>): boolean =>
  !('ca' in config) || !config.ca;

/** Whether the CA exists: the creation-only settings no longer apply. */
export const localCaIsProvisioned = (config: Record<string, unknown>): boolean => !needsProvisioning(config);

const oneLine = (dn: string): string => dn.split('\n').join(', ');

/**
 * Refuses imported CA material that did not issue `issued`, a certificate already issued under
 * this issuer: importing another CA would orphan every certificate issued so far (CRL and OCSP
 * would be signed by a CA their relying parties do not chain them to). The certificate's
 * issuer name and AKI must match the imported CA (checkIssued) and its signature must verify
 * with the imported public key. Only public data goes into the message.
 */
function assertIssuedBy(
  issuerId: string,
  material: NonNullable<LocalCaConfig['ca']>,
  issued: IssuedCertificateSample,
): void {
  const ca = new X509Certificate(material.issuing_cert_pem);
  const leaf = new X509Certificate(issued.certificatePem);
  const signed = leaf.verify(ca.publicKey);
  if (signed && leaf.checkIssued(ca)) return;
  const keyId = Buffer.from(readCertificate(material.issuing_cert_pem).keyIdentifier).toString('hex');
  const why = signed
    ? `verifies with the imported key, but its issuer name '${oneLine(leaf.issuer)}' or authority key identifier does not match the imported CA certificate '${oneLine(ca.subject)}'`
    : `is not signed by the key of the imported CA '${oneLine(ca.subject)}' (key identifier ${keyId})`;
  throw fail(
    'issuer_not_ready',
    `issuer '${issuerId}': the imported CA is not the CA that issued this issuer's certificates: certificate ${issued.serialNumber} ${why}; import the CA that issued them (its certificate_pem and private_key_pem)`,
  );
}

/**
 * The Local connector's check of an issuer update: CA material given for an issuer without a CA
 * is validated now rather than on first use, and when the issuer has issued certificates (its
 * CA was lost, e.g. an old backup restored) it must be the CA that issued them (`409`).
 */
export async function checkLocalCaConfigUpdate(check: ConfigUpdateCheck): Promise<void> {
  // With a CA present the import keys are creation-only settings, refused by the service.
  if (!needsProvisioning(check.current)) return;
  if (
    !('certificate_pem' in check.next) &&
    !('private_key_pem' in check.next) &&
    !('private_key_label' in check.next)
  )
    return;
  const next = parseConfig(check.issuerId, check.next);
  const material = await importMaterial(
    check.issuerId,
    next,
    custodyFor(check.issuerId, next, check.keyCustody),
  );
  const issued = await check.issuedCertificate();
  if (issued) assertIssuedBy(check.issuerId, material, issued);
}

/**
 * Creates or imports the CA material of a Local issuer; returns the config to store. The
 * imported key leaves `private_key_pem` and lives only under `ca`.
 */
export async function provisionLocalCa(
  issuer: { id: string; name: string },
  config: Record<string, unknown>,
  now: Date,
  sharedCustody?: KeyCustody,
): Promise<Record<string, unknown>> {
  const parsed = parseConfig(issuer.id, config);
  if (parsed.ca) return withoutRootKey(config) ?? config;
  const custody = custodyFor(issuer.id, parsed, sharedCustody);
  // A generated software root's key is dropped here: nobody asked for it (see generateLocalCaWithRootKey).
  const ca = isImport(parsed)
    ? await importMaterial(issuer.id, parsed, custody)
    : (await generateMaterial(issuer, parsed, now, custody)).ca;
  const { certificate_pem: _c, private_key_pem: _k, private_key_label: _l, chain_pem: _p, ...rest } = config;
  return { ...rest, ca };
}

/**
 * Generates the CA of a Local issuer being created and hands its root key to the caller, who
 * asked for it to keep offline: returns the config to store (without that key) and the root's
 * key and certificate, PEM. An import (`certificate_pem`/`private_key_pem`) has no root key
 * here, so asking for one with it is refused.
 */
export async function generateLocalCaWithRootKey(
  issuer: { name: string },
  config: Record<string, unknown>,
  now: Date,
): Promise<{ config: Record<string, unknown>; rootPrivateKeyPem: string; rootCertificatePem: string }> {
  const parsed = parseConfig('(new issuer)', config);
  if ((parsed.key_custody ?? 'software') !== 'software') {
    const message = 'a root key created on a PKCS#11 token is non-extractable and stays there';
    throw fail('invalid_input', `cannot return a root private key: ${message}`, {
      fields: [{ field: 'root_private_key', message }],
    });
  }
  if (isImport(parsed) || parsed.ca) {
    const message =
      'only a CA generated by this request has a root key to return; an imported CA has none here';
    throw fail('invalid_input', `cannot return a root private key: ${message}`, {
      fields: [{ field: 'root_private_key', message }],
    });
  }
  const generated = await generateMaterial(
    { id: '(new issuer)', name: issuer.name },
    parsed,
    now,
    new SoftwareKeyCustody(),
  );
  return {
    config: { ...config, ca: generated.ca },
    rootPrivateKeyPem: generated.rootKeyPem!,
    rootCertificatePem: generated.rootCertificatePem,
  };
}

type ResponderMaterial = NonNullable<LocalCaConfig['ocsp_responder']>;

/**
 * The responder's key: ECDSA P-256, or the issuing CA's own parameter set under a post-quantum
 * CA, so that its OCSP responses are post-quantum signed like its certificates and CRLs.
 */
function responderAlgorithm(authority: IssuingAuthority): KeyAlgorithm {
  const name = authority.signatureAlgorithm.name;
  return isPostQuantumParameterSet(name) ? name : 'ECDSA-P256';
}

async function issueResponder(
  issuerId: string,
  authority: IssuingAuthority,
  now: Date,
  custody: KeyCustody,
): Promise<{ material: ResponderMaterial; key: SigningKey; label: string }> {
  const software = custody instanceof SoftwareKeyCustody;
  const label = software ? `ocsp ${now.getTime()}` : keyLabel(issuerId, 'ocsp', now);
  await custody.createKey({ algorithm: responderAlgorithm(authority), label, extractable: software });
  const key = await custody.signingKey(label);
  const notAfter = new Date(
    Math.min(
      now.getTime() + LOCAL_CA_DEFAULTS.responderValidityDays * DAY,
      authority.certificate.notAfter.getTime(),
    ),
  );
  const cert = issueCertificate(
    {
      subject: [
        ...authority.certificate.subject.rdns
          .flat()
          .filter((a) => a.type === 'O')
          .map((a) => ({ type: 'O', value: a.value })),
        { type: 'CN', value: 'OCSP Responder' },
      ],
      publicKey: key.spki,
      notBefore: new Date(now.getTime() - 60_000),
      notAfter,
      keyUsage: ['digitalSignature'],
      extendedKeyUsage: ['OCSPSigning'],
      ocspNoCheck: true,
    },
    authority,
  );
  const material: ResponderMaterial = software
    ? { cert_pem: certificateToPem(cert.der), key_pem: (custody as SoftwareKeyCustody).exportPkcs8(label) }
    : { cert_pem: certificateToPem(cert.der), key_label: label };
  return { material, key, label };
}

/** The signing keys a connector works with, resolved from the config by its custody. */
export interface LocalCaKeys {
  custody: KeyCustody;
  issuing: SigningKey;
  responder?: SigningKey;
}

async function resolveKeys(
  issuerId: string,
  config: LocalCaConfig,
  shared: KeyCustody | undefined,
): Promise<LocalCaKeys> {
  const ca = config.ca!;
  const custody = custodyFor(issuerId, config, shared);
  const issuing = await signingKeyOf(custody, ca.issuing_key_label ?? 'issuing', ca.issuing_key_pem);
  const r = config.ocsp_responder;
  if (!r) return { custody, issuing };
  try {
    return { custody, issuing, responder: await signingKeyOf(custody, r.key_label ?? 'ocsp', r.key_pem) };
  } catch {
    // A lost responder key is replaced by a fresh responder on the first OCSP request.
    return { custody, issuing };
  }
}

/** A Local CA connector over provisioned material. */
export class LocalCaConnector implements IssuerConnector {
  readonly type = 'Local' as const;
  readonly capabilities = { crl: true, ocsp: true };
  readonly issuerId: string;
  readonly revocationSigner: RevocationSigner;
  readonly #authority: IssuingAuthority;
  readonly #chain: string[];
  readonly #context: ConnectorContext;
  readonly #config: LocalCaConfig;
  #responder: OcspResponder | undefined;
  #responderPending: Promise<OcspResponder> | undefined;

  readonly #custody: KeyCustody;
  #responderLabel: string | undefined;

  constructor(context: ConnectorContext, keys: LocalCaKeys) {
    const config = parseConfig(context.issuer.id, context.issuer.config);
    if (!config.ca)
      throw new CertwrightError('internal', `issuer '${context.issuer.id}' has no CA material yet`);
    this.issuerId = context.issuer.id;
    this.#context = context;
    this.#config = config;
    this.#custody = keys.custody;
    this.#authority = prepareIssuer(config.ca.issuing_cert_pem, keys.issuing);
    this.#chain = [
      certificateToPem(this.#authority.certificate.der),
      ...pemDecodeCertificates(config.ca.upper_chain_pem || '').map((d) => certificateToPem(d)),
    ];
    if (config.ocsp_responder && keys.responder) {
      this.#responder = prepareOcspResponder(config.ocsp_responder.cert_pem, keys.responder);
      this.#responderLabel = config.ocsp_responder.key_label ?? 'ocsp';
    }
    const authority = this.#authority;
    this.revocationSigner = {
      certificate: authority.certificate,
      signCrl: (input) =>
        buildCrl({
          issuerCert: authority.certificate,
          issuerKey: authority.privateKey,
          thisUpdate: input.thisUpdate,
          nextUpdate: input.nextUpdate,
          crlNumber: input.crlNumber,
          ...(input.entries ? { entries: input.entries } : {}),
          ...(input.encodedEntries ? { encodedEntries: input.encodedEntries } : {}),
          ...(input.deltaBaseCrlNumber !== undefined ? { deltaBaseCrlNumber: input.deltaBaseCrlNumber } : {}),
        }),
      ocspResponder: (now) => this.#currentResponder(now),
      ...(deltaSchedule(config.delta_crl) ? { deltaCrl: deltaSchedule(config.delta_crl)! } : {}),
    };
  }

  get certificate(): CertificateInfo {
    return this.#authority.certificate;
  }

  async issue(request: IssueRequest): Promise<IssueResult> {
    const base = this.#context.publicBaseUrl?.replace(/\/+$/, '');
    const pointers = certificatePointers(this.#config, base, this.issuerId);
    // A leaf must not outlive its CA; cut the validity rather than refuse (the profile's
    // maximum is an upper bound, not a promise).
    const notAfter = new Date(
      Math.min(request.notAfter.getTime(), this.#authority.certificate.notAfter.getTime()),
    );
    const issued = issueCertificate(
      {
        subject: request.subject,
        publicKey: request.publicKey,
        notBefore: request.notBefore,
        notAfter,
        subjectAltNames: request.subjectAltNames,
        extendedKeyUsage: request.extendedKeyUsage,
        mustStaple: request.mustStaple,
        // A short-lived certificate keeps only caIssuers: path building still needs the CA.
        ...(request.shortLived
          ? { noRevAvail: true, authorityInfoAccess: { caIssuers: pointers.caIssuers } }
          : {
              crlDistributionPoints: pointers.crlDistributionPoints,
              freshestCrl: pointers.freshestCrl,
              authorityInfoAccess: { ocsp: pointers.ocsp, caIssuers: pointers.caIssuers },
            }),
      },
      this.#authority,
    );
    return { ...issued, chainPem: this.#chain.join('') };
  }

  renew(request: IssueRequest): Promise<IssueResult> {
    return this.issue(request);
  }

  async revoke(): Promise<void> {
    // Status is published from storage (CRL, OCSP); the local CA keeps no list of its own.
  }

  async caChain(): Promise<string[]> {
    return [...this.#chain];
  }

  async #currentResponder(now: Date): Promise<OcspResponder> {
    const current = this.#responder;
    const renewAt = (r: OcspResponder) =>
      r.certificate.notAfter.getTime() - LOCAL_CA_DEFAULTS.responderRenewBeforeDays * DAY;
    if (
      current &&
      now.getTime() < renewAt(current) &&
      now.getTime() >= current.certificate.notBefore.getTime()
    ) {
      return current;
    }
    // One re-issue at a time per connector; concurrent OCSP requests wait for it.
    this.#responderPending ??= (async () => {
      try {
        const { material, key, label } = await issueResponder(
          this.issuerId,
          this.#authority,
          now,
          this.#custody,
        );
        await this.#context.persistConfig((config) => ({ ...config, ocsp_responder: material }));
        this.#responder = prepareOcspResponder(material.cert_pem, key);
        // The replaced responder's key signs nothing any more (on a token it is deleted there).
        const retired = this.#responderLabel;
        this.#responderLabel = label;
        if (retired && retired !== label) await this.#custody.destroy(retired).catch(() => undefined);
        return this.#responder;
      } finally {
        this.#responderPending = undefined;
      }
    })();
    return this.#responderPending;
  }
}

/** The Local connector factory: provisions CA material on first use, then builds the connector. */
export async function createLocalCaConnector(context: ConnectorContext): Promise<IssuerConnector> {
  if (!needsProvisioning(context.issuer.config)) {
    const cleaned = withoutRootKey(context.issuer.config);
    if (!cleaned) return buildConnector(context);
    // A root key stored by an earlier release: removed under the issuer's row lock, re-judged
    // on the latest config so that a concurrent writer's changes are kept.
    await context.persistConfig((latest) => withoutRootKey(latest));
    return buildConnector({ ...context, issuer: { ...context.issuer, config: cleaned } });
  }
  // Material missing after certificates were issued means the config was replaced below the
  // service (e.g. an old backup restored): a fresh CA would silently orphan every issued
  // certificate, so only an explicit import of the CA that issued them is accepted.
  if (await context.hasIssued?.()) {
    const config = parseConfig(context.issuer.id, context.issuer.config);
    if (!isImport(config)) {
      throw fail(
        'issuer_not_ready',
        `issuer '${context.issuer.id}' has issued certificates but its CA material is missing from its config; refusing to create a new CA (restore the config, or import the CA that issued them: PUT /api/v1/issuers/${context.issuer.id} with config certificate_pem and private_key_pem)`,
      );
    }
    // Checked again here, not only on the update: the config may have been written below the service.
    const material = await importMaterial(
      context.issuer.id,
      config,
      custodyFor(context.issuer.id, config, context.keyCustody),
    );
    const issued = await context.issuedCertificate?.();
    if (!issued) {
      throw fail(
        'issuer_not_ready',
        `issuer '${context.issuer.id}' has issued certificates but none could be read to check the imported CA against; refusing the import`,
      );
    }
    assertIssuedBy(context.issuer.id, material, issued);
  }
  const fresh = await provisionLocalCa(
    context.issuer,
    context.issuer.config,
    context.now(),
    context.keyCustody,
  );
  let stored = fresh;
  await context.persistConfig((latest) => {
    // Another instance may have provisioned meanwhile: keep its CA, drop ours.
    if (!needsProvisioning(latest)) {
      const cleaned = withoutRootKey(latest);
      stored = cleaned ?? latest;
      return cleaned;
    }
    return fresh;
  });
  return buildConnector({ ...context, issuer: { ...context.issuer, config: stored } });
}

async function buildConnector(context: ConnectorContext): Promise<LocalCaConnector> {
  const config = parseConfig(context.issuer.id, context.issuer.config);
  if (!config.ca)
    throw new CertwrightError('internal', `issuer '${context.issuer.id}' has no CA material yet`);
  return new LocalCaConnector(context, await resolveKeys(context.issuer.id, config, context.keyCustody));
}
