import { Link, Navigate, Outlet, useRouterState } from '@tanstack/react-router';
import { useState } from 'react';
import { MeProvider, useSelf, useSignOut } from '../auth';
import { ErrorBox, Loading } from './common';

interface NavItem {
  to: string;
  label: string;
  permission: string;
}

/** Navigation; an entry whose page the caller may not read is not shown. */
export const NAV: readonly NavItem[] = [
  { to: '/', label: 'Dashboard', permission: 'cert.read' },
  { to: '/certificates', label: 'Certificates', permission: 'cert.read' },
  { to: '/alerts/notifications', label: 'Alerts → Notifications', permission: 'webhook.read' },
  { to: '/settings/webhook-security', label: 'Webhook security', permission: 'webhook.read' },
  { to: '/audit', label: 'Audit trail', permission: 'audit.read' },
  { to: '/owners', label: 'Owners', permission: 'owner.read' },
  { to: '/teams', label: 'Teams', permission: 'team.read' },
  { to: '/discovery', label: 'Discovery', permission: 'scan.read' },
  { to: '/discovery/targets', label: 'Scan targets', permission: 'scan.read' },
  { to: '/health-checks', label: 'TLS health checks', permission: 'healthcheck.read' },
  { to: '/agents', label: 'Agents', permission: 'agent.read' },
  { to: '/targets', label: 'Targets', permission: 'target.read' },
  { to: '/jobs', label: 'Jobs', permission: 'job.read' },
  { to: '/notifications', label: 'Notifications', permission: 'notification.read' },
  { to: '/policies', label: 'Policy rules', permission: 'policy.read' },
  { to: '/renewal-policies', label: 'Renewal policies', permission: 'renewal_policy.read' },
  { to: '/profiles', label: 'Profiles', permission: 'profile.read' },
  { to: '/issuers', label: 'Issuers', permission: 'issuer.read' },
  { to: '/enrollment/est', label: 'EST', permission: 'admin.est.read' },
  { to: '/enrollment/scep', label: 'SCEP', permission: 'admin.scep.read' },
  { to: '/acme-eab-keys', label: 'ACME EAB keys', permission: 'acme.eab.read' },
  { to: '/acme-accounts', label: 'ACME accounts', permission: 'acme.account.read' },
  { to: '/people/users', label: 'Users', permission: 'auth.user.read' },
  { to: '/people/sessions', label: 'Sessions', permission: 'auth.session.list' },
  { to: '/people/oidc-providers', label: 'OIDC providers', permission: 'auth.oidc.list' },
  { to: '/people/group-mappings', label: 'Group mappings', permission: 'auth.oidc.list' },
  { to: '/people/breakglass', label: 'Break-glass credentials', permission: 'auth.breakglass.admin' },
];

export function Shell() {
  const self = useSelf();
  const signOut = useSignOut();
  const [menuOpen, setMenuOpen] = useState(false);
  const path = useRouterState({ select: (s) => s.location.pathname });
  if (self.isPending) return <Loading what="Checking who you are" />;
  if (self.isError) {
    return (
      <main className="page">
        <ErrorBox error={self.error} />
      </main>
    );
  }
  const me = self.data;
  if (!me) return <Navigate to="/login" search={{}} />;
  const items = NAV.filter((item) => me.permissions.includes(item.permission));
  return (
    <MeProvider me={me}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="/" className="brand">
          certwright
        </Link>
        <button
          type="button"
          className="button menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="primary-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <span className="who" title={`${me.kind} ${me.id}`}>
          {me.display_name ?? (me.kind === 'api-key' ? 'API key' : me.id)}
        </span>
        <button type="button" className="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <div className="layout">
        <nav id="primary-nav" aria-label="Primary" className={menuOpen ? 'side open' : 'side'}>
          <ul>
            {items.map((item) => (
              <li key={item.to}>
                <Link
                  to={item.to}
                  aria-current={path === item.to ? 'page' : undefined}
                  onClick={() => setMenuOpen(false)}
                >
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" className="page" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </MeProvider>
  );
}
