import { type AcmeConnectorDeps, createAcmeConnectorFactory } from './acme/connector.js';
import { ephemeralHttp01Store } from './acme/http01.js';
import { ACME_MANAGED_CONFIG_KEYS, validateAcmeSettings } from './acme/settings.js';
import { IssuerConnectorRegistry } from './connector.js';
import {
  checkLocalCaConfigUpdate,
  createLocalCaConnector,
  generateLocalCaWithRootKey,
  LOCAL_CA_CREATION_ONLY_CONFIG_KEYS,
  LOCAL_CA_MANAGED_CONFIG_KEYS,
  localCaIsProvisioned,
  validateLocalCaSettings,
  withoutRootKey,
} from './local-ca.js';

export interface DefaultConnectorOptions {
  /** What the ACME issuer connector needs from the service (challenge responder, outbound client). */
  acme?: AcmeConnectorDeps;
}

/**
 * The registry with every connector this release ships: Local and ACME. The other issuer types
 * (StepCA, VaultPKI …) are inventory records until a connector is registered for them
 * (docs/api/issuers.md, "Adding a connector").
 */
export const defaultIssuerConnectors = (options: DefaultConnectorOptions = {}): IssuerConnectorRegistry =>
  new IssuerConnectorRegistry()
    .register('Local', createLocalCaConnector, {
      managedConfigKeys: LOCAL_CA_MANAGED_CONFIG_KEYS,
      creationOnlyConfigKeys: LOCAL_CA_CREATION_ONLY_CONFIG_KEYS,
      isProvisioned: localCaIsProvisioned,
      checkConfigUpdate: checkLocalCaConfigUpdate,
      validateSettings: validateLocalCaSettings,
      generateWithRootKey: generateLocalCaWithRootKey,
      withoutRetiredState: withoutRootKey,
    })
    .register('ACME', createAcmeConnectorFactory(options.acme), {
      managedConfigKeys: ACME_MANAGED_CONFIG_KEYS,
      validateSettings: (config) => {
        validateAcmeSettings(config);
      },
    });

export { type AcmeConnectorDeps, ephemeralHttp01Store };
