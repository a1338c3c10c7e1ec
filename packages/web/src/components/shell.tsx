import { Link, Navigate, Outlet, useRouterState } from '@tanstack/react-router';
import { useState } from 'react';
import { MeProvider, useSelf, useSignOut } from '../auth';
import { visibleGroups } from '../navigation';
import { applyTheme, nextTheme, storedTheme, type ThemeChoice } from '../theme';
import { CommandPalette } from './command-palette';
import { ErrorBox, Loading } from './common';

export function Shell() {
  const self = useSelf();
  const signOut = useSignOut();
  const [menuOpen, setMenuOpen] = useState(false);
  const path = useRouterState({ select: (s) => s.location.pathname });
  const [theme, setTheme] = useState<ThemeChoice>(storedTheme);
  const switchTheme = () => {
    const next = nextTheme(theme);
    applyTheme(next);
    setTheme(next);
  };
  // The page's frame is drawn while the session is checked, so the screen is never blank.
  if (self.isPending) return <ShellSkeleton />;
  if (self.isError) {
    return (
      <main className="page">
        <ErrorBox error={self.error} />
      </main>
    );
  }
  const me = self.data;
  if (!me) return <Navigate to="/login" search={{}} />;
  const groups = visibleGroups(me.permissions);
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
        <CommandPalette groups={groups} />
        <button
          type="button"
          className="button theme-toggle"
          onClick={switchTheme}
          aria-label={`Theme: ${theme} (switch to ${nextTheme(theme)})`}
        >
          {theme === 'system' ? 'Theme: system' : theme === 'light' ? 'Theme: light' : 'Theme: dark'}
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
          {groups.map((group) => (
            <section key={group.label} className="nav-group" aria-labelledby={`nav-${group.label}`}>
              <h2 id={`nav-${group.label}`}>{group.label}</h2>
              <ul>
                {group.items.map((item) => (
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
            </section>
          ))}
        </nav>
        <main id="main" className="page" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </MeProvider>
  );
}

/** The header and an empty navigation while the session is checked. */
function ShellSkeleton() {
  return (
    <>
      <header className="top">
        <span className="brand">certwright</span>
      </header>
      <div className="layout">
        <nav aria-label="Primary" className="side skeleton" aria-busy="true">
          <span className="skeleton-line" />
          <span className="skeleton-line" />
          <span className="skeleton-line" />
        </nav>
        <main id="main" className="page" tabIndex={-1}>
          <Loading what="Checking who you are" />
        </main>
      </div>
    </>
  );
}
