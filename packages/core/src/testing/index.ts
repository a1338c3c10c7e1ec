export { type AcmeStorageContractSubject, describeAcmeStorageContract } from './acme-storage-contract.js';
export { type AuditHeadLossSubject, describeAuditHeadLoss } from './audit-head-contract.js';
export { expectUnavailableThenRecovered } from './connection-loss.js';
export { describeDiscoveryStorageContract } from './discovery-contract.js';
export {
  type ContractOptions,
  describeEphemeralContract,
  type EphemeralContractSubject,
} from './ephemeral-contract.js';
export {
  type FuzzReport,
  type FuzzTarget,
  fuzzTarget,
  lastResult,
  mutated,
  mutatedText,
  randomDer,
  typedOnly,
} from './fuzz.js';
export {
  csrWithPublicKey,
  type HostileKey,
  hostilePrivateKeys,
  hostilePublicKeys,
  POINT_AT_INFINITY_CSR_HEX,
  processKillingCsrs,
} from './hostile-keys.js';
export {
  describeKeyCustodyContract,
  type KeyCustodyContractOptions,
  type KeyCustodyContractSubject,
  verifyWithSpki,
} from './key-custody-contract.js';
export { describePeopleStorageContract, type PeopleContractSubject } from './people-contract.js';
export { describeQueueContract, type QueueContractSubject } from './queue-contract.js';
export { describeStorageContract, type StorageContractSubject } from './storage-contract.js';
export { TcpRelay } from './tcp-relay.js';
