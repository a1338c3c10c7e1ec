export {
  type CertwrightClient,
  type CertwrightClientCore,
  CLIENT_VERSION,
  createClient,
  type Download,
  operations,
  type RawInput,
} from './client.js';
export {
  CertwrightClientError,
  ClientConfigError,
  ConnectionError,
  type ConnectionFailure,
  InsecureBaseUrlError,
  type Problem,
  ProblemError,
  UPGRADE_GUIDE,
} from './errors.js';
export type { components, operations as OperationTypes, paths } from './generated/schema.js';
export type { OperationSpec, ParameterSpec } from './operation-spec.js';
export {
  type ClientOptions,
  clientOptionsFromEnv,
  parseBaseUrl,
  parseBoolean,
  readSecretFile,
} from './options.js';
export { INSECURE_WARNING } from './tls.js';
export type {
  BinaryBody,
  OperationId,
  OperationInput,
  OperationMethods,
  OperationOutput,
  PagedOperationId,
  PageItem,
  RequestOptions,
} from './types.js';
