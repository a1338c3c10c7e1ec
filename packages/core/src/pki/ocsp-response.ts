import { createHash } from 'node:crypto';
import { CertwrightError } from '../errors.js';
import { type CertificateInfo, readCertificate } from './certificate-info.js';
import { REVOCATION_REASON_CODES, type RevocationReason } from './crl.js';
import {
  bitString,
  enumerated,
  explicit,
  extension,
  generalizedTime,
  octetString,
  oid,
  sequence,
  tlv,
} from './der.js';
import { decodeExtKeyUsage } from './extensions.js';
import type { OcspCertId } from './ocsp-request.js';
import { OID } from './oids.js';
import {
  type PrivateSigningKey,
  type SignatureAlgorithm,
  signatureAlgorithmFor,
  signData,
  signingKeySpki,
} from './signature.js';

/** OCSP responses (RFC 6960 §4.2): BasicOCSPResponse signed by a delegated responder. */

export const OCSP_RESPONSE_STATUS = {
  successful: 0,
  malformedRequest: 1,
  internalError: 2,
  tryLater: 3,
  sigRequired: 5,
  unauthorized: 6,
} as const;

export type OcspErrorStatus = Exclude<keyof typeof OCSP_RESPONSE_STATUS, 'successful'>;

export type OcspCertStatus =
  | { status: 'good' }
  | { status: 'revoked'; revokedAt: Date; reason?: RevocationReason }
  | { status: 'unknown' };

export interface OcspSingleResponse {
  certId: Pick<OcspCertId, 'der'>;
  certStatus: OcspCertStatus;
  thisUpdate: Date;
  nextUpdate?: Date;
}

/** A delegated responder, prepared once: signing key, ResponderID and the `certs` field. */
export interface OcspResponder {
  certificate: CertificateInfo;
  privateKey: PrivateSigningKey;
  signatureAlgorithm: SignatureAlgorithm;
  responderId: Buffer;
  certsField: Buffer;
}

/**
 * Prepares a responder from its certificate (which must carry id-kp-OCSPSigning: RFC 6960
 * §4.2.2.2) and private key. The certificate is sent in `certs` so clients can check the
 * delegation against the issuing CA.
 */
export function prepareOcspResponder(
  certificate: Uint8Array | string | CertificateInfo,
  privateKey: PrivateSigningKey,
): OcspResponder {
  const info =
    typeof certificate === 'string' || certificate instanceof Uint8Array
      ? readCertificate(certificate)
      : certificate;
  const eku = info.extensions.find((e) => e.oid === OID.extKeyUsage);
  if (!eku || !decodeExtKeyUsage(eku.value).includes('OCSPSigning')) {
    throw new CertwrightError('validation_failed', 'the OCSP responder certificate lacks id-kp-OCSPSigning');
  }
  if (!signingKeySpki(privateKey).equals(Buffer.from(info.spki))) {
    throw new CertwrightError('validation_failed', 'the OCSP responder key does not match its certificate');
  }
  // ResponderID byKey: [2] EXPLICIT KeyHash (SHA-1 of the subjectPublicKey bits).
  const keyHash = createHash('sha1').update(info.publicKeyBits).digest();
  return {
    certificate: info,
    privateKey,
    signatureAlgorithm: signatureAlgorithmFor(privateKey),
    responderId: explicit(2, octetString(keyHash)),
    certsField: explicit(0, sequence(info.der)),
  };
}

function certStatus(s: OcspCertStatus): Buffer {
  switch (s.status) {
    case 'good':
      return Buffer.from([0x80, 0x00]); // [0] IMPLICIT NULL
    case 'unknown':
      return Buffer.from([0x82, 0x00]); // [2] IMPLICIT UnknownInfo (NULL)
    case 'revoked': {
      const parts = [generalizedTime(s.revokedAt)];
      if (s.reason && s.reason !== 'unspecified')
        parts.push(explicit(0, enumerated(REVOCATION_REASON_CODES[s.reason])));
      return tlv(0xa1, ...parts); // [1] IMPLICIT RevokedInfo
    }
  }
}

function singleResponse(r: OcspSingleResponse): Buffer {
  const parts = [Buffer.from(r.certId.der), certStatus(r.certStatus), generalizedTime(r.thisUpdate)];
  if (r.nextUpdate) parts.push(explicit(0, generalizedTime(r.nextUpdate)));
  return sequence(...parts);
}

/** Wraps a ResponseStatus (and optional ResponseBytes) into an OCSPResponse. */
function ocspResponse(status: number, basic?: Buffer): Buffer {
  const parts = [enumerated(status)];
  if (basic) parts.push(explicit(0, sequence(oid(OID.idPkixOcspBasic), octetString(basic))));
  return sequence(...parts);
}

export interface BuildOcspResponseOptions {
  responder: OcspResponder;
  producedAt: Date;
  responses: readonly OcspSingleResponse[];
  /** The request's nonce extnValue, echoed verbatim (RFC 8954). */
  nonce?: Uint8Array;
}

/** Builds and signs a successful OCSPResponse (DER). */
export function buildOcspResponse(options: BuildOcspResponseOptions): Buffer {
  const { responder } = options;
  if (options.responses.length === 0)
    throw new CertwrightError('internal', 'an OCSP response needs at least one SingleResponse');
  const tbsParts = [
    responder.responderId,
    generalizedTime(options.producedAt),
    sequence(...options.responses.map(singleResponse)),
  ];
  if (options.nonce)
    tbsParts.push(explicit(1, sequence(extension(OID.idPkixOcspNonce, false, options.nonce))));
  const tbs = sequence(...tbsParts);
  const signature = signData(responder.signatureAlgorithm, responder.privateKey, tbs);
  const basic = sequence(
    tbs,
    responder.signatureAlgorithm.identifier,
    bitString(signature),
    responder.certsField,
  );
  return ocspResponse(OCSP_RESPONSE_STATUS.successful, basic);
}

const ERROR_RESPONSES = new Map<OcspErrorStatus, Buffer>(
  (Object.keys(OCSP_RESPONSE_STATUS) as (keyof typeof OCSP_RESPONSE_STATUS)[])
    .filter((k): k is OcspErrorStatus => k !== 'successful')
    .map((k) => [k, ocspResponse(OCSP_RESPONSE_STATUS[k])]),
);

/** An unsigned error OCSPResponse (malformedRequest, internalError, tryLater, sigRequired, unauthorized). */
export function buildOcspErrorResponse(status: OcspErrorStatus): Buffer {
  const r = ERROR_RESPONSES.get(status);
  if (!r) throw new CertwrightError('internal', `unknown OCSP response status '${status}'`);
  return Buffer.from(r);
}
