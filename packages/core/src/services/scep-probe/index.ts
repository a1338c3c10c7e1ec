/**
 * The SCEP probe (docs/protocols/scep-probe.md): what a SCEP server advertises and which CA
 * it enrolls under, read with GetCACaps and GetCACert through the outbound address guard.
 */
export {
  type CertificateSummary,
  chooseCa,
  MAX_CA_CERTIFICATES,
  readCaCertificates,
  summarizeCertificate,
} from './ca-certificates.js';
export { type CapabilityFlags, capabilityFlags, parseCapabilities } from './capabilities.js';
export { bitLength, describeKey } from './key-description.js';
export {
  SCEP_PROBE_HISTORY_DEFAULT,
  SCEP_PROBE_HISTORY_MAX,
  SCEP_PROBE_MAX_BODY_BYTES,
  SCEP_PROBE_MAX_CONCURRENT,
  SCEP_PROBE_TIMEOUT_MS,
  type ScepProbeHistoryQuery,
  type ScepProbeInput,
  type ScepProbeOptions,
  ScepProbeService,
  scepProbeHistorySchema,
  scepProbeInputSchema,
  scepProbeResult,
} from './service.js';
