export * from './connector.js';
export * from './local-ca.js';

import { IssuerConnectorRegistry } from './connector.js';
import { createLocalCaConnector, LOCAL_CA_MANAGED_CONFIG_KEYS } from './local-ca.js';

/** The registry with every connector this release ships: Local only (ACME, StepCA … later). */
export const defaultIssuerConnectors = (): IssuerConnectorRegistry =>
  new IssuerConnectorRegistry().register('Local', createLocalCaConnector, {
    managedConfigKeys: LOCAL_CA_MANAGED_CONFIG_KEYS,
  });
