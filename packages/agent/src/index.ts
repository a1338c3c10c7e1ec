/**
 * @certwright/agent — the SDK agents are built on: the four agent routes over HTTPS, agent-side
 * key generation, the agent loop, and deployment connectors that write atomically, validate,
 * reload, roll back and verify.
 */
export {
  AgentApi,
  type AgentJob,
  type HeartbeatFacts,
  type JobReport,
  MalformedWorkError,
  parseWork,
  type RegistrationInput,
  registerAgent,
  type Work,
  type WorkCertificate,
  type WorkItem,
  type WorkTarget,
} from './api.js';
export {
  AgentConfigError,
  type AgentConnection,
  type AgentFileSettings,
  connectionFromEnv,
  HTTPS_UPGRADE_GUIDE,
  requireHttpsUrl,
} from './config.js';
export * from './connector.js';
export * from './connectors/index.js';
export { type DiscoveredCertificate, type DiscoveryReporter, scanForCertificates } from './discovery.js';
export {
  BACKUP_SUFFIX,
  checkAllowedPath,
  type FileWriter,
  JOURNAL_SUFFIX,
  PathNotAllowedError,
  recoverInterrupted,
  removeStaleTemporaries,
  writeFileAtomic,
} from './files.js';
export { AgentHttpError } from './http.js';
export { AgentKeyStore } from './keys.js';
export { type AgentLogger, jsonLogger, silentAgentLogger } from './logger.js';
export {
  AGENT_VERSION,
  type AgentOptions,
  type AgentStatus,
  CertwrightAgent,
  type StopReason,
} from './runner.js';
export { type Endpoint, fingerprint256, servedCertificate, verifyEndpoint } from './verify.js';
