/**
 * The permission catalogue. Every authenticated REST route names exactly one of these; a
 * principal holds a set of them through its roles (docs/auth/permissions.md has the route
 * table). Names are `<family>.<action>`; the `auth.*` names are fixed by the API contract.
 */
export const PERMISSIONS = {
  'system.read': 'read the OpenAPI document and service metadata',
  'system.metrics': 'scrape the Prometheus metrics',

  'cert.read': 'list and read certificates, versions, key data, public exports, the dashboard',
  'cert.write': 'create, update, delete, archive, issue, renew and reassign certificates',
  'cert.revoke': 'revoke certificates, singly or in bulk',
  'cert.export_key': 'export a certificate with its private key (PKCS#12)',

  'issuer.read': 'list and read issuers and their chains',
  'issuer.write': 'create, update and delete issuers (CA key material)',
  'profile.read': 'list and read certificate profiles',
  'profile.write': 'create, update and delete certificate profiles',
  'owner.read': 'list and read owners',
  'owner.write': 'create, update and delete owners',
  'team.read': 'list and read teams',
  'team.write': 'create, update and delete teams',
  'renewal_policy.read': 'list and read renewal policies',
  'renewal_policy.write': 'create, update and delete renewal policies',
  'policy.read': 'list and read policy rules and violations',
  'policy.write': 'create, update, delete and evaluate policy rules',

  'agent.read': 'list and read agents, retired ones included',
  'agent.register': 'register an agent and receive its key',
  'agent.retire': 'retire an agent',
  'agent.self': "an agent's own routes: heartbeat, work, CSR, job status",
  'target.read': 'list and read deployment targets',
  'target.write': 'create, update, delete and test deployment targets',
  'job.read': 'list and read jobs and their verification',
  'job.write': 'cancel and verify jobs',

  'notification.read': 'list and read notifications',
  'notification.write': 'requeue notifications and mark them read',
  'notification.create': 'send an arbitrary notification',
  'webhook.read': 'list and read webhooks (their URLs may carry tokens), deliveries and the private-range allowlist',
  'webhook.write': 'create, update, delete, test and redeliver webhooks; change the private-range allowlist',

  'audit.read': 'read the audit trail, its head and its chain verification',
  'audit.export': 'export the audit trail as NDJSON',

  'acme.eab.read': 'list and read ACME external account binding keys',
  'acme.eab.write': 'create and delete ACME external account binding keys',

  'scan.read': 'read network scan targets, scans, SCEP probe results and discovered certificates',
  'scan.write': 'manage network scan targets (which authorize connections inside the network) and run scans',
  'scan.probe': 'probe a SCEP server (public addresses, and private ranges only as the operator allows)',
  'scan.triage': 'claim discovered certificates into the inventory or dismiss them',
  'healthcheck.read': 'read TLS endpoint health checks and their history',
  'healthcheck.write': 'create, update and delete TLS endpoint health checks (destinations inside the network)',
  'healthcheck.acknowledge': 'acknowledge an endpoint health problem',

  'admin.est.read': 'per-profile EST statistics',
  'admin.est.reload': 'reload EST trust anchors',
  'admin.scep.read': 'SCEP profile snapshots and device-management statistics',
  'admin.scep.reload': 'reload SCEP device-management trust anchors',

  'auth.self.read': 'read who you are and which permissions you hold (the web console asks first)',
  'auth.session.list': 'list your own sessions',
  'auth.session.list.all': "list every user's sessions",
  'auth.session.revoke': 'revoke sessions',
  'auth.oidc.list': 'list OIDC providers, their key status and the group mappings',
  'auth.oidc.create': 'add OIDC providers and dry-run discovery',
  'auth.oidc.edit': 'change OIDC providers and refresh their discovery and keys',
  'auth.oidc.delete': 'remove OIDC providers',
  'auth.breakglass.admin': 'manage break-glass credentials and unlock them',
  'auth.user.read': 'list users, roles and role assignments',
  'auth.user.deactivate': 'deactivate and reactivate users',
  'auth.role.assign': 'define roles, assign them to users and OIDC groups, read the runtime auth settings',
} as const satisfies Record<string, string>;

export type Permission = keyof typeof PERMISSIONS;

export const PERMISSION_NAMES: readonly Permission[] = Object.freeze(
  Object.keys(PERMISSIONS) as Permission[],
);

export function isPermission(name: string): name is Permission {
  return Object.hasOwn(PERMISSIONS, name);
}

/** A role's name and what it grants. */
export interface RoleDefinition {
  name: string;
  description: string;
  permissions: readonly Permission[];
}

/**
 * Reads that every built-in role may hold. Webhook reads are not among them: a webhook's URL
 * may embed the chat or push token it delivers with.
 */
const reads = PERMISSION_NAMES.filter(
  (p) => p.endsWith('.read') && !p.startsWith('admin.') && p !== 'webhook.read',
);

/**
 * Built-in roles. Their names are reserved: a custom role cannot take one, and they cannot be
 * changed, so an upgrade that adds a permission extends them everywhere at once.
 */
export const BUILT_IN_ROLES: readonly RoleDefinition[] = Object.freeze([
  {
    name: 'admin',
    description: "every permission except an agent's own routes (those take the agent's key)",
    permissions: PERMISSION_NAMES.filter((p) => p !== 'agent.self'),
  },
  {
    name: 'operator',
    description:
      'day-to-day certificate work: read the inventory; manage certificates, owners, teams, renewal ' +
      'policies, policy rules, targets, jobs and notifications; probe SCEP servers, triage discovered ' +
      'certificates, acknowledge endpoint problems; no revocation, CA, profile, key export, audit trail, ' +
      'ACME EAB key, webhook, scan target, health check or auth changes',
    permissions: [
      ...reads.filter((p) => !p.startsWith('auth.') && p !== 'audit.read' && p !== 'acme.eab.read'),
      'system.read',
      'cert.write',
      'owner.write',
      'team.write',
      'renewal_policy.write',
      'policy.write',
      'target.write',
      'job.write',
      'notification.write',
      'scan.probe',
      'scan.triage',
      'healthcheck.acknowledge',
      'auth.self.read',
      'auth.session.list',
      'auth.session.revoke',
    ],
  },
  {
    name: 'viewer',
    description: 'read-only access to the inventory; no audit trail, no auth configuration',
    permissions: [
      ...reads.filter((p) => !p.startsWith('auth.') && p !== 'audit.read' && p !== 'acme.eab.read'),
      'system.read',
      'auth.self.read',
      'auth.session.list',
      'auth.session.revoke',
    ],
  },
  {
    name: 'auditor',
    description: 'read-only access plus the audit trail and its export',
    permissions: [
      ...reads.filter((p) => !p.startsWith('auth.') && p !== 'acme.eab.read'),
      'system.read',
      'audit.export',
      'auth.self.read',
      'auth.session.list',
      'auth.session.revoke',
    ],
  },
]);

export const BUILT_IN_ROLE_NAMES: ReadonlySet<string> = new Set(BUILT_IN_ROLES.map((r) => r.name));

/** The union of what the given roles grant; unknown role names grant nothing. */
export function permissionsOf(
  roleNames: Iterable<string>,
  customRoles: readonly RoleDefinition[] = [],
): Set<Permission> {
  const byName = new Map<string, RoleDefinition>();
  for (const role of customRoles) byName.set(role.name, role);
  for (const role of BUILT_IN_ROLES) byName.set(role.name, role);
  const granted = new Set<Permission>();
  for (const name of roleNames) {
    for (const permission of byName.get(name)?.permissions ?? []) granted.add(permission);
  }
  return granted;
}
