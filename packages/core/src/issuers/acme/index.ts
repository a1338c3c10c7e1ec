export { type AcmeConnectorDeps, createAcmeConnectorFactory } from './connector.js';
export { challTestSrvDnsProvider, type DnsProvider } from './dns-provider.js';
export { ephemeralHttp01Store, type Http01Responder, type Http01Store } from './http01.js';
export {
  ACME_ISSUER_CHALLENGE_TYPES,
  ACME_MANAGED_CONFIG_KEYS,
  type AcmeIssuerSettings,
  acmeIssuerSettingsSchema,
  validateAcmeSettings,
} from './settings.js';
