import type { KeyObject } from 'node:crypto';
import { buildEnvelopedData } from '../cms/enveloped-data.js';
import { buildCertsOnly, buildSignedData, type CmsAttribute, type CmsDigest } from '../cms/signed-data.js';
import { octetString, printableString } from '../der.js';
import { SCEP_FAIL_INFO, SCEP_MESSAGE_TYPES, SCEP_OID, SCEP_PKI_STATUS, type ScepFailInfo } from './oids.js';

/**
 * Writing a CertRep (RFC 8894 §3.3.2): a SignedData by the RA whose signed attributes echo the
 * request's transactionID and senderNonce (as recipientNonce) and carry pkiStatus, failInfo
 * and a fresh senderNonce. On SUCCESS the content is a degenerate certificates-only SignedData
 * with the issued certificate, enveloped with AES to the requester's signing certificate; on
 * FAILURE and PENDING there is no content. buildSignedData writes the signed attributes in DER
 * order (Go's pkcs7 re-sorts before it verifies).
 */

export interface CertRepOptions {
  /** The RA: its certificate (carried in the reply) and key. */
  ra: { certificate: Uint8Array; privateKey: KeyObject };
  transactionId: string;
  /** The request's senderNonce, echoed as recipientNonce. */
  recipientNonce: Uint8Array;
  /** Our own 16 random octets. */
  senderNonce: Uint8Array;
  /** The request's digest, so the client verifies with what it chose. */
  digest: CmsDigest;
  result:
    | {
        status: 'SUCCESS';
        /** The issued certificate first, DER. */
        certificates: Uint8Array[];
        /** The requester's signing certificate: the envelope's recipient. */
        recipient: Uint8Array;
      }
    | { status: 'FAILURE'; failInfo: ScepFailInfo }
    | { status: 'PENDING' };
}

export function buildCertRep(options: CertRepOptions): Buffer {
  const { result } = options;
  const attributes: CmsAttribute[] = [
    { type: SCEP_OID.messageType, values: [printableString(String(SCEP_MESSAGE_TYPES.CertRep))] },
    { type: SCEP_OID.transactionID, values: [printableString(options.transactionId)] },
    { type: SCEP_OID.pkiStatus, values: [printableString(String(SCEP_PKI_STATUS[result.status]))] },
    { type: SCEP_OID.senderNonce, values: [octetString(options.senderNonce)] },
    { type: SCEP_OID.recipientNonce, values: [octetString(options.recipientNonce)] },
  ];
  if (result.status === 'FAILURE') {
    attributes.push({
      type: SCEP_OID.failInfo,
      values: [printableString(String(SCEP_FAIL_INFO[result.failInfo]))],
    });
  }
  const content =
    result.status === 'SUCCESS'
      ? buildEnvelopedData({
          content: buildCertsOnly(result.certificates),
          recipient: { certificate: result.recipient },
          contentEncryption: 'aes-256-cbc',
        })
      : undefined;
  return buildSignedData({
    ...(content ? { content } : {}),
    signer: { certificate: options.ra.certificate, privateKey: options.ra.privateKey },
    digest: options.digest,
    signedAttributes: attributes,
    certificates: [options.ra.certificate],
  });
}
