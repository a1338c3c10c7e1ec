export * from './connector.js';
export * from './local-ca.js';

import { IssuerConnectorRegistry } from './connector.js';
import {
  checkLocalCaConfigUpdate,
  createLocalCaConnector,
  generateLocalCaWithRootKey,
  LOCAL_CA_CREATION_ONLY_CONFIG_KEYS,
  LOCAL_CA_MANAGED_CONFIG_KEYS,
  localCaIsProvisioned,
  withoutRootKey,
} from './local-ca.js';

/** The registry with every connector this release ships: Local only (ACME, StepCA … later). */
export const defaultIssuerConnectors = (): IssuerConnectorRegistry =>
  new IssuerConnectorRegistry().register('Local', createLocalCaConnector, {
    managedConfigKeys: LOCAL_CA_MANAGED_CONFIG_KEYS,
    creationOnlyConfigKeys: LOCAL_CA_CREATION_ONLY_CONFIG_KEYS,
    isProvisioned: localCaIsProvisioned,
    checkConfigUpdate: checkLocalCaConfigUpdate,
    generateWithRootKey: generateLocalCaWithRootKey,
    withoutRetiredState: withoutRootKey,
  });
