/** SCEP (RFC 8894) messages: reading PKIMessages, writing CertReps. See docs/protocols/scep.md. */

export { buildCertRep, type CertRepOptions } from './cert-rep.js';
export { buildScepRequest, type CertRep, readCertRep, type ScepRequestOptions } from './client.js';
export { assertAnswerable, parseScepRequest, SCEP_MESSAGE_LIMITS, type ScepRequest } from './message.js';
export {
  SCEP_FAIL_INFO,
  SCEP_MESSAGE_TYPES,
  SCEP_NONCE_LENGTH,
  SCEP_OID,
  SCEP_PKI_STATUS,
  type ScepFailInfo,
  type ScepMessageType,
  type ScepPkiStatus,
} from './oids.js';
