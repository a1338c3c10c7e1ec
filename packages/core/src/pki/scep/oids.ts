/**
 * SCEP (RFC 8894 §3.2.1) attribute types and their values. The attributes sit among the signed
 * attributes of a PKIMessage; every value is a PrintableString except the nonces.
 */
export const SCEP_OID = {
  messageType: '2.16.840.1.113733.1.9.2',
  pkiStatus: '2.16.840.1.113733.1.9.3',
  failInfo: '2.16.840.1.113733.1.9.4',
  senderNonce: '2.16.840.1.113733.1.9.5',
  recipientNonce: '2.16.840.1.113733.1.9.6',
  transactionID: '2.16.840.1.113733.1.9.7',
} as const;

/** RFC 8894 §3.2.1.2. */
export const SCEP_MESSAGE_TYPES = {
  CertRep: 3,
  RenewalReq: 17,
  PKCSReq: 19,
  CertPoll: 20,
  GetCert: 21,
  GetCRL: 22,
} as const;
export type ScepMessageType = keyof typeof SCEP_MESSAGE_TYPES;

/** RFC 8894 §3.2.1.3. */
export const SCEP_PKI_STATUS = { SUCCESS: 0, FAILURE: 2, PENDING: 3 } as const;
export type ScepPkiStatus = keyof typeof SCEP_PKI_STATUS;

/** RFC 8894 §3.2.1.4. */
export const SCEP_FAIL_INFO = {
  badAlg: 0,
  badMessageCheck: 1,
  badRequest: 2,
  badTime: 3,
  badCertId: 4,
} as const;
export type ScepFailInfo = keyof typeof SCEP_FAIL_INFO;

/** RFC 8894 §3.2.1.5: nonces are 16 octets. */
export const SCEP_NONCE_LENGTH = 16;
