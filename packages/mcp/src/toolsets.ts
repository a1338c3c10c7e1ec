/**
 * Which tools a server offers: every REST operation belongs to one toolset, and says what calling
 * it does to the server's state. A host chooses toolsets at start (`--toolsets`); the default is
 * a small, mostly read-only set that fits a model's tool budget. The table is explicit so that a
 * new operation is a decision (test/toolsets.test.ts fails until it is listed).
 */

export const TOOLSETS = [
  'inventory',
  'lifecycle',
  'enrollment',
  'fleet',
  'monitoring',
  'alerts',
  'audit',
  'access',
  'admin',
] as const;
export type Toolset = (typeof TOOLSETS)[number];

export const DEFAULT_TOOLSETS: readonly Toolset[] = ['inventory', 'lifecycle'];

export const TOOLSET_DESCRIPTIONS: Record<Toolset, string> = {
  inventory:
    'certificates, their versions, key data and PEM, owners, teams, issuers, profiles, renewal policies, policy rules and violations, the dashboard (read-only)',
  lifecycle:
    'create, issue, renew, revoke, archive and delete certificates, bulk operations, PKCS#12 export, jobs',
  enrollment: 'ACME accounts and EAB keys, EST and SCEP administration, SCEP probes',
  fleet: 'agents, deployment targets, deployment verification, cancelling jobs',
  monitoring: 'TLS endpoint health checks, discovered certificates, network scans',
  alerts: 'notifications and webhooks',
  audit: 'the audit trail: events, head, verification, export',
  access: 'users, roles, sessions, OIDC providers, break-glass credentials',
  admin:
    'create, change and delete owners, teams, issuers, profiles, renewal policies and policy rules; evaluate the policies',
};

/**
 * What a call does: `read` changes nothing; `additive` adds or starts something and overwrites
 * nothing; `destructive` overwrites, removes, revokes or ends something (hosts ask first, and so
 * does this server).
 */
export type Effect = 'read' | 'additive' | 'destructive';

export interface ToolClass {
  toolset: Toolset;
  effect: Effect;
  /** The call reaches beyond this certwright server (an external CA, a scanned host, a webhook). */
  openWorld?: boolean;
}

const r = (toolset: Toolset): ToolClass => ({ toolset, effect: 'read' });
const a = (toolset: Toolset, openWorld = false): ToolClass => ({
  toolset,
  effect: 'additive',
  ...(openWorld ? { openWorld } : {}),
});
const d = (toolset: Toolset): ToolClass => ({ toolset, effect: 'destructive' });

/**
 * Operations that are never tools: the agents' own wire protocol (their key, their job claims),
 * the demo clean-up, and the OpenAPI document (the tools are its description already).
 */
export const NEVER_TOOLS = new Set([
  'agentHeartbeat',
  'agentWork',
  'agentSubmitCsr',
  'agentReportJob',
  'agentReportDiscoveries',
  'cleanupDemoResidue',
  'getOpenApi',
]);

export const CLASSES: Record<string, ToolClass> = {
  // inventory
  listCertificates: r('inventory'),
  getCertificate: r('inventory'),
  listCertificateVersions: r('inventory'),
  getCertificateVersionDetails: r('inventory'),
  resolveNames: r('inventory'),
  getCertificateKeyData: r('inventory'),
  exportCertificate: r('inventory'),
  getDashboardSummary: r('inventory'),
  getDashboardOverview: r('inventory'),
  listOwners: r('inventory'),
  getOwner: r('inventory'),
  listTeams: r('inventory'),
  getTeam: r('inventory'),
  listIssuers: r('inventory'),
  getIssuerCrlPublication: r('inventory'),
  getIssuer: r('inventory'),
  getIssuerChain: r('inventory'),
  getIssuerChainDetails: r('inventory'),
  listProfiles: r('inventory'),
  getProfile: r('inventory'),
  listRenewalPolicys: r('inventory'),
  getRenewalPolicy: r('inventory'),
  listPolicyRules: r('inventory'),
  getPolicyRule: r('inventory'),
  listViolations: r('inventory'),
  getViolation: r('inventory'),
  getVersion: r('inventory'),
  // lifecycle
  createCertificate: a('lifecycle'),
  updateCertificate: d('lifecycle'),
  issueCertificate: a('lifecycle', true),
  renewCertificate: a('lifecycle', true),
  revokeCertificate: d('lifecycle'),
  archiveCertificate: d('lifecycle'),
  deleteCertificate: d('lifecycle'),
  // Changes nothing, but hands out a private key: not offered as read-only.
  exportCertificatePkcs12: a('lifecycle'),
  bulkRevokeCertificates: d('lifecycle'),
  bulkRenewCertificates: a('lifecycle', true),
  bulkReassignCertificates: d('lifecycle'),
  listJobs: r('lifecycle'),
  getJob: r('lifecycle'),
  // enrollment
  listAcmeAccounts: r('enrollment'),
  getAcmeAccount: r('enrollment'),
  deactivateAcmeAccount: d('enrollment'),
  listAcmeEabKeys: r('enrollment'),
  getAcmeEabKey: r('enrollment'),
  createAcmeEabKey: a('enrollment'),
  deleteAcmeEabKey: d('enrollment'),
  estAdminProfiles: r('enrollment'),
  estAdminReloadTrust: a('enrollment'),
  estBulkRevokeCertificates: d('enrollment'),
  scepAdminProfiles: r('enrollment'),
  scepMdmStats: r('enrollment'),
  scepMdmReloadTrust: a('enrollment'),
  probeScepServer: a('enrollment', true),
  listScepProbes: r('enrollment'),
  // fleet
  listAgents: r('fleet'),
  listRetiredAgents: r('fleet'),
  getAgent: r('fleet'),
  registerAgent: a('fleet'),
  retireAgent: d('fleet'),
  listTargets: r('fleet'),
  getTarget: r('fleet'),
  createTarget: a('fleet'),
  updateTarget: d('fleet'),
  deleteTarget: d('fleet'),
  testTarget: a('fleet', true),
  cancelJob: d('fleet'),
  getJobVerification: r('fleet'),
  verifyJob: a('fleet', true),
  // monitoring
  listHealthChecks: r('monitoring'),
  getHealthCheck: r('monitoring'),
  healthCheckHistory: r('monitoring'),
  healthCheckSummary: r('monitoring'),
  createHealthCheck: a('monitoring', true),
  updateHealthCheck: d('monitoring'),
  deleteHealthCheck: d('monitoring'),
  acknowledgeHealthCheck: a('monitoring'),
  discoverySummary: r('monitoring'),
  listDiscoveredCertificates: r('monitoring'),
  getDiscoveredCertificate: r('monitoring'),
  getDiscoveredCertificateDetails: r('monitoring'),
  claimDiscoveredCertificate: a('monitoring'),
  dismissDiscoveredCertificate: a('monitoring'),
  listDiscoveryScans: r('monitoring'),
  getDiscoveryScan: r('monitoring'),
  listScanTargets: r('monitoring'),
  getScanTarget: r('monitoring'),
  createScanTarget: a('monitoring'),
  updateScanTarget: d('monitoring'),
  deleteScanTarget: d('monitoring'),
  runScanTarget: a('monitoring', true),
  // alerts
  listNotifications: r('alerts'),
  getNotification: r('alerts'),
  createNotification: a('alerts'),
  readNotification: a('alerts'),
  requeueNotification: a('alerts'),
  listWebhooks: r('alerts'),
  getWebhook: r('alerts'),
  createWebhook: a('alerts'),
  updateWebhook: d('alerts'),
  deleteWebhook: d('alerts'),
  testWebhook: a('alerts', true),
  redeliverWebhook: a('alerts', true),
  listWebhookDeliveries: r('alerts'),
  getWebhookSecurity: r('alerts'),
  updateWebhookSecurity: d('alerts'),
  // audit
  listAudit: r('audit'),
  getAuditHead: r('audit'),
  verifyAuditChain: r('audit'),
  exportAudit: r('audit'),
  // access
  getAuthInfo: r('access'),
  getAuthRuntimeConfig: r('access'),
  getAuthSelf: r('access'),
  getSignInOptions: r('access'),
  listAuthUsers: r('access'),
  createAuthUser: a('access'),
  getAuthUserRoles: r('access'),
  setAuthUserRoles: d('access'),
  deactivateAuthUser: d('access'),
  reactivateAuthUser: a('access'),
  listAuthRoles: r('access'),
  createAuthRole: a('access'),
  updateAuthRole: d('access'),
  deleteAuthRole: d('access'),
  listAuthSessions: r('access'),
  revokeAuthSession: d('access'),
  revokeOtherAuthSessions: d('access'),
  listOidcProviders: r('access'),
  createOidcProvider: a('access', true),
  updateOidcProvider: d('access'),
  deleteOidcProvider: d('access'),
  refreshOidcProvider: a('access', true),
  getOidcJwksStatus: r('access'),
  // A dry run of discovery: it reaches the provider and stores nothing.
  testOidcDiscovery: { toolset: 'access', effect: 'read', openWorld: true },
  listOidcGroupMappings: r('access'),
  createOidcGroupMapping: a('access'),
  deleteOidcGroupMapping: d('access'),
  listBreakglassCredentials: r('access'),
  setBreakglassPassword: d('access'),
  deleteBreakglassCredential: d('access'),
  unlockBreakglassCredential: a('access'),
  // admin
  createOwner: a('admin'),
  updateOwner: d('admin'),
  deleteOwner: d('admin'),
  createTeam: a('admin'),
  updateTeam: d('admin'),
  deleteTeam: d('admin'),
  createIssuer: a('admin'),
  updateIssuer: d('admin'),
  deleteIssuer: d('admin'),
  createProfile: a('admin'),
  updateProfile: d('admin'),
  deleteProfile: d('admin'),
  createRenewalPolicy: a('admin'),
  updateRenewalPolicy: d('admin'),
  deleteRenewalPolicy: d('admin'),
  createPolicyRule: a('admin'),
  updatePolicyRule: d('admin'),
  deletePolicyRule: d('admin'),
  evaluatePolicies: a('admin'),
};

/** `--toolsets a,b` (or `all`): the chosen sets, or an error naming the unknown ones. */
export function parseToolsets(text: string | undefined): Toolset[] {
  if (text === undefined) return [...DEFAULT_TOOLSETS];
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (names.includes('all')) return [...TOOLSETS];
  const unknown = names.filter((n) => !(TOOLSETS as readonly string[]).includes(n));
  if (unknown.length > 0)
    throw new Error(`--toolsets: unknown ${unknown.join(', ')} (known: ${TOOLSETS.join(', ')}, all)`);
  if (names.length === 0) throw new Error(`--toolsets: name at least one of ${TOOLSETS.join(', ')}`);
  return [...new Set(names)] as Toolset[];
}
