import type { KeyObject } from 'node:crypto';
import { fail } from '../../errors.js';
import { buildEnvelopedData, openEnvelopedData } from '../cms/enveloped-data.js';
import {
  attributeValues,
  buildSignedData,
  type CmsDigest,
  parseCertsOnly,
  parseSignedData,
  verifySignerInfo,
} from '../cms/signed-data.js';
import { identifies } from '../cms/structure.js';
import { octetString, printableString, Tag } from '../der.js';
import { content, type DerBounds, expectTag, readRoot, readString } from '../der-reader.js';
import { SCEP_MESSAGE_LIMITS } from './message.js';
import {
  SCEP_FAIL_INFO,
  SCEP_MESSAGE_TYPES,
  SCEP_OID,
  SCEP_PKI_STATUS,
  type ScepFailInfo,
  type ScepMessageType,
  type ScepPkiStatus,
} from './oids.js';

/**
 * The client side of SCEP (RFC 8894 §3): writing a PKIMessage and reading the CertRep. Used by
 * tests, the benchmark and embedders that enroll against a SCEP server.
 */

export interface ScepRequestOptions {
  messageType: Exclude<ScepMessageType, 'CertRep'>;
  transactionId: string;
  /** 16 random octets. */
  senderNonce: Uint8Array;
  /** The content before encryption: a CSR (PKCSReq, RenewalReq) or IssuerAndSubject (CertPoll). */
  content: Uint8Array;
  /** The signer: a self-signed certificate for a first request, the current one for renewal. */
  signer: { certificate: Uint8Array; privateKey: KeyObject };
  /** The RA (or CA) certificate the content is encrypted to. */
  recipient: Uint8Array;
  digest?: CmsDigest;
  contentEncryption?: 'aes-128-cbc' | 'aes-256-cbc';
  /** Adds a signingTime attribute. */
  signingTime?: Date;
}

export function buildScepRequest(options: ScepRequestOptions): Buffer {
  const envelope = buildEnvelopedData({
    content: options.content,
    recipient: { certificate: options.recipient },
    contentEncryption: options.contentEncryption ?? 'aes-256-cbc',
  });
  return buildSignedData({
    content: envelope,
    signer: options.signer,
    digest: options.digest ?? 'sha256',
    ...(options.signingTime ? { signingTime: options.signingTime } : {}),
    signedAttributes: [
      {
        type: SCEP_OID.messageType,
        values: [printableString(String(SCEP_MESSAGE_TYPES[options.messageType]))],
      },
      { type: SCEP_OID.transactionID, values: [printableString(options.transactionId)] },
      { type: SCEP_OID.senderNonce, values: [octetString(options.senderNonce)] },
    ],
  });
}

export interface CertRep {
  status: ScepPkiStatus;
  failInfo?: ScepFailInfo;
  transactionId: string;
  recipientNonce: Uint8Array;
  /** SUCCESS: the certificates of the reply, issued certificate first. */
  certificates: Uint8Array[];
}

const stringOf = (der: Uint8Array, field: string) => readString(der, readRoot(der), field);

/**
 * Reads a CertRep: its signature must verify with `ra` (the certificate it was sent to), and
 * a SUCCESS is decrypted with the requester's key. Fails with `malformed`, `signature_invalid`.
 */
export function readCertRep(
  der: Uint8Array,
  options: {
    ra: Uint8Array;
    requester: { certificate: Uint8Array; privateKey: KeyObject };
    limits?: Partial<DerBounds>;
  },
): CertRep {
  const sd = parseSignedData(der, { ...SCEP_MESSAGE_LIMITS, ...options.limits });
  const signer = sd.signers[0];
  if (!signer || !identifies(signer.sid, options.ra))
    throw fail('signature_invalid', 'the CertRep is not signed by the RA');
  verifySignerInfo(sd, signer, options.ra);
  const one = (type: string, field: string) => {
    const [value] = attributeValues(signer.signedAttributes, type);
    if (!value) throw fail('malformed', `the CertRep has no ${field}`);
    return value;
  };
  if (
    stringOf(one(SCEP_OID.messageType, 'messageType'), 'messageType') !== String(SCEP_MESSAGE_TYPES.CertRep)
  ) {
    throw fail('malformed', 'the reply is not a CertRep');
  }
  const statusText = stringOf(one(SCEP_OID.pkiStatus, 'pkiStatus'), 'pkiStatus');
  const status = (Object.keys(SCEP_PKI_STATUS) as ScepPkiStatus[]).find(
    (s) => String(SCEP_PKI_STATUS[s]) === statusText,
  );
  if (!status) throw fail('malformed', `unknown pkiStatus '${statusText.slice(0, 8)}'`);
  const nonce = one(SCEP_OID.recipientNonce, 'recipientNonce');
  const result: CertRep = {
    status,
    transactionId: stringOf(one(SCEP_OID.transactionID, 'transactionID'), 'transactionID'),
    recipientNonce: Buffer.from(
      content(nonce, expectTag(readRoot(nonce), Tag.OCTET_STRING, 'recipientNonce')),
    ),
    certificates: [],
  };
  if (status === 'FAILURE') {
    const text = stringOf(one(SCEP_OID.failInfo, 'failInfo'), 'failInfo');
    const info = (Object.keys(SCEP_FAIL_INFO) as ScepFailInfo[]).find(
      (f) => String(SCEP_FAIL_INFO[f]) === text,
    );
    if (!info) throw fail('malformed', `unknown failInfo '${text.slice(0, 8)}'`);
    result.failInfo = info;
  }
  if (status === 'SUCCESS') {
    if (!sd.content) throw fail('malformed', 'a SUCCESS CertRep carries no envelope');
    const inner = openEnvelopedData(sd.content, {
      privateKey: options.requester.privateKey,
      certificate: options.requester.certificate,
    });
    result.certificates = parseCertsOnly(inner);
  }
  return result;
}
