/** One page the navigation offers; hidden when the caller lacks `permission`. */
export interface NavItem {
  to: string;
  label: string;
  permission: string;
}

/** Pages grouped by the task an operator has in mind (the side navigation and Ctrl-K use this). */
export interface NavGroup {
  label: string;
  items: readonly NavItem[];
}

export const NAV_GROUPS: readonly NavGroup[] = [
  {
    label: 'Overview',
    items: [{ to: '/', label: 'Dashboard', permission: 'cert.read' }],
  },
  {
    label: 'Inventory',
    items: [
      { to: '/certificates', label: 'Certificates', permission: 'cert.read' },
      { to: '/owners', label: 'Owners', permission: 'owner.read' },
      { to: '/teams', label: 'Teams', permission: 'team.read' },
      { to: '/renewal-policies', label: 'Renewal policies', permission: 'renewal_policy.read' },
      { to: '/policies', label: 'Policy rules', permission: 'policy.read' },
      { to: '/policies/violations', label: 'Policy violations', permission: 'policy.read' },
    ],
  },
  {
    label: 'Enrollment',
    items: [
      { to: '/profiles', label: 'Profiles', permission: 'profile.read' },
      { to: '/acme-accounts', label: 'ACME accounts', permission: 'acme.account.read' },
      { to: '/acme-eab-keys', label: 'ACME EAB keys', permission: 'acme.eab.read' },
      { to: '/enrollment/est', label: 'EST', permission: 'admin.est.read' },
      { to: '/enrollment/scep', label: 'SCEP', permission: 'admin.scep.read' },
    ],
  },
  {
    label: 'Issuers',
    items: [{ to: '/issuers', label: 'Issuers', permission: 'issuer.read' }],
  },
  {
    label: 'Fleet',
    items: [
      { to: '/agents', label: 'Agents', permission: 'agent.read' },
      { to: '/targets', label: 'Targets', permission: 'target.read' },
      { to: '/jobs', label: 'Jobs', permission: 'job.read' },
    ],
  },
  {
    label: 'Monitoring',
    items: [
      { to: '/discovery', label: 'Discovery', permission: 'scan.read' },
      { to: '/discovery/targets', label: 'Scan targets', permission: 'scan.read' },
      { to: '/health-checks', label: 'TLS health checks', permission: 'healthcheck.read' },
    ],
  },
  {
    label: 'Alerts',
    items: [
      { to: '/alerts/notifications', label: 'Webhooks', permission: 'webhook.read' },
      { to: '/notifications', label: 'Notifications', permission: 'notification.read' },
    ],
  },
  {
    label: 'Audit',
    items: [{ to: '/audit', label: 'Audit trail', permission: 'audit.read' }],
  },
  {
    label: 'Access',
    items: [
      { to: '/people/users', label: 'Users', permission: 'auth.user.read' },
      { to: '/people/sessions', label: 'Sessions', permission: 'auth.session.list' },
      { to: '/people/oidc-providers', label: 'OIDC providers', permission: 'auth.oidc.list' },
      { to: '/people/group-mappings', label: 'Group mappings', permission: 'auth.oidc.list' },
      { to: '/people/breakglass', label: 'Break-glass credentials', permission: 'auth.breakglass.admin' },
    ],
  },
  {
    label: 'Settings',
    items: [{ to: '/settings/webhook-security', label: 'Webhook security', permission: 'webhook.read' }],
  },
];

/** The groups with only the pages these permissions may read; empty groups dropped. */
export function visibleGroups(permissions: readonly string[]): NavGroup[] {
  return NAV_GROUPS.map((group) => ({
    label: group.label,
    items: group.items.filter((item) => permissions.includes(item.permission)),
  })).filter((group) => group.items.length > 0);
}
