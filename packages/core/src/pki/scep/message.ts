import { fail } from '../../errors.js';
import { certificateInfo } from '../cms/certificate-cache.js';
import { CMS_OID } from '../cms/oids.js';
import {
  attributeValues,
  type CmsSignerInfo,
  type ParsedSignedData,
  parseSignedData,
} from '../cms/signed-data.js';
import { identifies } from '../cms/structure.js';
import { Tag } from '../der.js';
import { content, type DerBounds, expectTag, malformed, readRoot, readString } from '../der-reader.js';
import { SCEP_MESSAGE_TYPES, SCEP_NONCE_LENGTH, SCEP_OID, type ScepMessageType } from './oids.js';

/**
 * Reading a SCEP PKIMessage (RFC 8894 §3.2): a SignedData with one signer whose signed
 * attributes carry messageType, transactionID and senderNonce, and whose content is the
 * EnvelopedData of the request (pkcsPKIEnvelope). Parsing verifies nothing: the caller checks
 * the signature (cms verifySignerInfo) and opens the envelope with the RA key.
 */

/**
 * A SCEP request is 2–10 KiB and nests about 12 levels; 256 KiB holds a request carrying a
 * long chain and refuses anything bigger before a field is decoded.
 */
export const SCEP_MESSAGE_LIMITS: Readonly<Partial<DerBounds>> = Object.freeze({
  maxBytes: 256 * 1024,
  maxNodes: 10_000,
  maxDepth: 24,
});

/** RFC 8894 §3.2.1.1: the transaction id is a PrintableString; clients use a hash (≤ 64 hex). */
const MAX_TRANSACTION_ID = 128;

export interface ScepRequest {
  messageType: ScepMessageType;
  transactionId: string;
  senderNonce: Uint8Array;
  /** The signer's certificate (self-signed for PKCSReq, the current one for RenewalReq), DER. */
  signerCertificate: Uint8Array;
  signer: CmsSignerInfo;
  signedData: ParsedSignedData;
  /** The pkcsPKIEnvelope: an EnvelopedData ContentInfo, DER. */
  envelope: Uint8Array;
}

const printable = (value: Uint8Array, field: string): string => {
  const root = readRoot(value);
  if (root.end !== value.length) throw malformed(field, 'trailing bytes');
  if (root.tag !== Tag.PRINTABLE_STRING && root.tag !== Tag.UTF8_STRING && root.tag !== Tag.IA5_STRING) {
    throw malformed(field, 'must be a PrintableString');
  }
  return readString(value, root, field);
};

function single(signer: CmsSignerInfo, type: string, field: string): Uint8Array {
  const values = attributeValues(signer.signedAttributes, type);
  const count = signer.signedAttributes?.filter((a) => a.type === type).length ?? 0;
  if (count !== 1 || values.length !== 1)
    throw malformed(field, 'must appear exactly once among the signed attributes');
  return values[0]!;
}

/**
 * Parses a PKIMessage from outside. Fails with `malformed` (not a PKIMessage, missing or
 * repeated SCEP attribute, unknown message type, no signer certificate) or `too_large`.
 */
export function parseScepRequest(
  input: Uint8Array,
  limits: Partial<DerBounds> = SCEP_MESSAGE_LIMITS,
): ScepRequest {
  const signedData = parseSignedData(input, { ...SCEP_MESSAGE_LIMITS, ...limits });
  if (signedData.signers.length !== 1) throw malformed('PKIMessage', 'must have exactly one signer');
  const signer = signedData.signers[0]!;
  if (!signer.signedAttributes) throw malformed('PKIMessage', 'the signer has no signed attributes');
  if (signedData.contentType !== CMS_OID.data || !signedData.content) {
    throw malformed('PKIMessage', 'the signed content must be the pkcsPKIEnvelope (id-data)');
  }
  const typeText = printable(single(signer, SCEP_OID.messageType, 'messageType'), 'messageType');
  const messageType = (Object.keys(SCEP_MESSAGE_TYPES) as ScepMessageType[]).find(
    (name) => String(SCEP_MESSAGE_TYPES[name]) === typeText,
  );
  if (!messageType || messageType === 'CertRep') {
    throw malformed('messageType', `'${typeText.slice(0, 8)}' is not a SCEP request type`);
  }
  const transactionId = printable(single(signer, SCEP_OID.transactionID, 'transactionID'), 'transactionID');
  if (transactionId.length === 0 || transactionId.length > MAX_TRANSACTION_ID) {
    throw malformed('transactionID', `must be 1 to ${MAX_TRANSACTION_ID} characters`);
  }
  if (!/^[A-Za-z0-9 '()+,\-./:=?]+$/.test(transactionId)) {
    throw malformed('transactionID', 'must hold PrintableString characters only');
  }
  const nonceDer = single(signer, SCEP_OID.senderNonce, 'senderNonce');
  const nonceNode = expectTag(readRoot(nonceDer), Tag.OCTET_STRING, 'senderNonce');
  const senderNonce = Buffer.from(content(nonceDer, nonceNode));
  if (senderNonce.length !== SCEP_NONCE_LENGTH)
    throw malformed('senderNonce', `must be ${SCEP_NONCE_LENGTH} octets`);
  const signerCertificate = signedData.certificates.find((c) => {
    try {
      return identifies(signer.sid, c);
    } catch {
      return false;
    }
  });
  if (!signerCertificate) throw malformed('PKIMessage', "the signer's certificate is not in the message");
  certificateInfo(signerCertificate); // bounded; malformed when it is not a certificate
  return {
    messageType,
    transactionId,
    senderNonce,
    signerCertificate,
    signer,
    signedData,
    envelope: signedData.content,
  };
}

/** Refuses a request type the server does not answer (GetCert, GetCRL): `invalid_input`. */
export function assertAnswerable(type: ScepMessageType): void {
  if (type === 'GetCert' || type === 'GetCRL') {
    throw fail('invalid_input', `${type} is not supported by this server`);
  }
}
