import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki } from '../../server/test/support/openssl-pki.js';
import { NAV_GROUPS } from '../src/navigation.js';
import { CHROMIUM, haveChromium, launchChromium } from './support/chromium.js';
import { accessible, type ConsoleServer, signInWithKey, startConsoleServer } from './support/console.js';

const SECRET = 'web-navigation-test-secret-0123456789abcdef';

if (!haveChromium)
  console.warn(`skipping the browser navigation test: ${CHROMIUM} is missing (apt-get install chromium)`);

/**
 * Finding one's way in the console: navigation grouped by task, the Ctrl-K search over records
 * and pages, the not-found page inside the shell, both colour themes (each passing axe), and the
 * inventory's filter, selection and revocation-reason behaviour operators rely on.
 */
describe.skipIf(!haveChromium)('finding one’s way in the console', () => {
  const pki = makeTestPki(['server']);
  let running: ConsoleServer;
  let browser: Browser;
  let page: Page;
  let certificateId: string;

  const api = (method: string, path: string, body?: unknown) => running.api(method, path, body);
  const go = (path: string) => page.goto(`${running.origin}${path}`);

  beforeAll(async () => {
    running = await startConsoleServer(pki, SECRET);
    const issuer = await api('POST', '/api/v1/issuers', { name: 'Palette CA', type: 'Local' });
    const owner = await api('POST', '/api/v1/owners', { name: 'Pia Owner', email: 'pia@example.test' });
    const team = await api('POST', '/api/v1/teams', { name: 'Palette Team' });
    const policy = (await api('GET', '/api/v1/renewal-policies')).data[0];
    for (const name of ['palette-web', 'palette-api']) {
      const cert = await api('POST', '/api/v1/certificates', {
        name,
        common_name: `${name}.example.test`,
        issuer_id: issuer.id,
        owner_id: owner.id,
        team_id: team.id,
        renewal_policy_id: policy.id,
        environment: 'prod',
      });
      await api('POST', `/api/v1/certificates/${cert.id}/issue`, {});
      if (name === 'palette-web') certificateId = cert.id;
    }
    browser = await launchChromium(readFileSync(pki.issued.server!.cert));
    page = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
    await signInWithKey(page, running.origin, SECRET);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await running?.server.close();
  });

  it('groups the navigation by task, each page under its heading', async () => {
    const nav = page.getByRole('navigation', { name: 'Primary' });
    const headings = await nav.getByRole('heading').allTextContents();
    expect(headings).toEqual([
      'Overview',
      'Inventory',
      'Enrollment',
      'Issuers',
      'Fleet',
      'Monitoring',
      'Alerts',
      'Audit',
      'Access',
      'Settings',
    ]);
    const group = (name: string) => nav.getByRole('region', { name });
    expect(await group('Fleet').getByRole('link').allTextContents()).toEqual(['Agents', 'Targets', 'Jobs']);
    expect(await group('Inventory').getByRole('link').allTextContents()).toEqual([
      'Certificates',
      'Owners',
      'Teams',
      'Renewal policies',
      'Policy rules',
      'Policy violations',
    ]);
    await group('Alerts').getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Alerts → Notifications', level: 1 }).waitFor();
  });

  it('Ctrl-K finds a certificate by a part of its name and a page by its label', async () => {
    await go('/');
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.keyboard.press('Control+k');
    const search = page.getByRole('combobox', { name: /Search certificates/ });
    await search.waitFor();
    await search.fill('palette-w');
    const hit = page.getByRole('option', { name: /palette-web.*Certificate/ });
    await hit.waitFor();
    expect(await page.getByRole('option', { name: /palette-api/ }).count()).toBe(0);
    await accessible(page, 'command-palette');
    await search.press('Enter');
    await page.waitForURL(`**/certificates/${certificateId}`);
    await page.getByRole('heading', { name: 'palette-web', level: 1 }).waitFor();

    // The issuer is found too; a page is found by its label and opened with the keyboard.
    await page.keyboard.press('Control+k');
    await search.fill('Palette CA');
    await page.getByRole('option', { name: /Palette CA.*Issuer/ }).waitFor();
    // A serial number as openssl prints it (upper case, colon-separated) finds its certificate.
    const versions = await api('GET', `/api/v1/certificates/${certificateId}/versions`);
    const serial: string = versions.data[0].serial_number;
    // openssl prints whole bytes: an odd number of hex digits (a leading zero nibble) gets its 0 back.
    const bytes = serial.length % 2 === 1 ? `0${serial}` : serial;
    await search.fill(bytes.toUpperCase().match(/.{2}/g)!.join(':'));
    await page.getByRole('option', { name: /palette-web \(serial .*Certificate/ }).waitFor();
    await search.fill('scan targets');
    await page.getByRole('option', { name: /Scan targets.*Monitoring/ }).waitFor();
    await search.press('Enter');
    await page.waitForURL('**/discovery/targets');
  });

  it('links each dashboard figure to the list that shows the same number', async () => {
    await go('/');
    const byTeam = page.getByRole('region', { name: 'Certificates by team' });
    await byTeam.getByRole('listitem').filter({ hasText: 'Palette Team' }).getByText('2').waitFor();
    await byTeam.getByRole('link', { name: 'Palette Team' }).click();
    await page.waitForURL(/team_id=/);
    await page.getByText('Page 1 of 1 · 2 in all').waitFor();

    // The week both certificates expire in: its link opens the inventory filtered to that week.
    await go('/');
    const timeline = page.getByRole('region', { name: /Expiry timeline/ });
    await timeline.getByRole('link', { name: /: 2 certificates$/ }).click();
    await page.waitForURL(/expires_before=/);
    await page.getByText('Page 1 of 1 · 2 in all').waitFor();
    await page.getByText(/^Expiring from/).waitFor();
    await accessible(page, 'inventory-expiry-window');
    await page.getByRole('button', { name: 'Remove the expiry filter' }).click();
    await page.waitForURL((url) => !url.search.includes('expires_before'));

    // Problems come first and link to filtered lists; the renewal figures open the job list.
    await go('/');
    await page.getByRole('heading', { name: 'Renewals', level: 2 }).waitFor();
    const headings = await page.getByRole('main').getByRole('heading', { level: 2 }).allTextContents();
    expect(headings.slice(0, 2)).toEqual(['Needs attention', 'Expiry timeline (next 13 weeks)']);
    await page
      .getByRole('region', { name: 'Renewals' })
      .getByRole('link', { name: '0', exact: true })
      .first()
      .click();
    await page.waitForURL(/\/jobs\?.*type=Renewal/);
    expect(await page.getByLabel('Type').inputValue()).toBe('Renewal');
  });

  it('puts policy violations among the problems, linking to their list with each certificate and rule named', async () => {
    const rule = await api('POST', '/api/v1/policies', {
      name: 'Staging only',
      type: 'AllowedEnvironments',
      config: { allowed: ['staging'] },
      severity: 'Critical',
    });
    await api('POST', '/api/v1/policies/evaluate');
    try {
      await go('/');
      // Both certificates are in prod: two violations, the count the list shows.
      await page
        .getByRole('region', { name: 'Needs attention' })
        .getByRole('link', { name: '2 policy violations' })
        .click();
      await page.waitForURL((url) => url.pathname === '/policies/violations');
      await page.getByRole('heading', { name: 'Policy violations', level: 1 }).waitFor();
      const row = page.getByRole('row').filter({ hasText: 'palette-web' });
      await row.getByRole('link', { name: 'palette-web' }).waitFor();
      await row.getByRole('link', { name: 'Staging only' }).waitFor();
      expect(await row.getByText('Critical', { exact: true }).count()).toBe(1);
      // Two rows and the header: the number the dashboard gave.
      await expect.poll(() => page.getByRole('row').count()).toBe(3);
      // The severity filter is in the URL and narrows the list.
      await page.getByLabel('Severity').selectOption('Warning');
      await page.waitForURL(/severity=Warning/);
      await page.getByText('No certificate breaks a policy rule.').waitFor();
      await accessible(page, 'policy-violations');
    } finally {
      await api('DELETE', `/api/v1/policies/${rule.id}`);
    }
  });

  it('shows an unknown address inside the shell, with the way back to the dashboard', async () => {
    await go('/no-such-page');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await page
      .getByRole('navigation', { name: 'Primary' })
      .getByRole('link', { name: 'Certificates' })
      .waitFor();
    await accessible(page, 'not-found');
    await page.getByRole('link', { name: 'Go to the dashboard' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  });

  it('follows the system’s dark preference, lets the operator choose, and passes axe on every page in both themes', async () => {
    const background = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    await page.emulateMedia({ colorScheme: 'light' });
    await go('/');
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    const light = await background();
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await background();
    expect(dark).not.toBe(light);
    // Every page the navigation offers, a certificate's page and the unknown address, in both themes.
    const paths = [
      ...NAV_GROUPS.flatMap((g) => g.items.map((i) => i.to)),
      `/certificates/${certificateId}`,
      '/no-such-page',
    ];
    for (const path of paths) {
      await page.emulateMedia({ colorScheme: 'dark' });
      await go(path);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      // Lists answer after the heading: check the page with its rows (or its empty state).
      await page.waitForLoadState('networkidle');
      // The palette follows color-scheme without a reload: the same page, checked in each theme.
      for (const scheme of ['dark', 'light'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await accessible(page, `${scheme}${path.replaceAll('/', '-')}`);
      }
    }
    await page.emulateMedia({ colorScheme: 'dark' });

    // The toggle overrides the system (light while the system is dark), and the choice survives a reload.
    await go('/');
    await page.getByRole('button', { name: /^Theme: system/ }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
    expect(await background()).toBe(light);
    await page.reload();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    expect(await background()).toBe(light);
    await page.getByRole('button', { name: /^Theme: light/ }).click();
    await page.getByRole('button', { name: /^Theme: dark/ }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBeUndefined();
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('clears every filter box with "Clear filters" and selects a whole page at once', async () => {
    await go('/certificates');
    const environment = page.getByLabel('Environment');
    await environment.fill('prod');
    await environment.blur();
    await page.waitForURL(/environment=prod/);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL((url) => !url.search.includes('environment'));
    expect(await environment.inputValue()).toBe('');

    await page.getByRole('checkbox', { name: 'Select every certificate on this page' }).check();
    await page.getByText('2 selected').waitFor();
    await page.getByRole('checkbox', { name: 'Select every certificate on this page' }).uncheck();
    await page.getByText('0 selected').waitFor();
  });

  it('offers the same revocation reasons for one certificate and for a selection, none that needs undoing', async () => {
    await go(`/certificates/${certificateId}`);
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    const single = await page.getByLabel('Reason').locator('option').allTextContents();
    await page.keyboard.press('Escape');

    await go('/certificates');
    await page.getByRole('checkbox', { name: 'Select palette-web' }).check();
    await page.getByRole('button', { name: 'Revoke selected' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke 1 certificate?' });
    const bulk = await dialog.getByLabel('Reason').locator('option').allTextContents();
    expect(bulk).toEqual(single);
    expect(bulk).not.toContain('certificateHold');
    await dialog.getByText('Revocation cannot be undone').waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('offers no Retire action for the server’s built-in agents, and a secondary one for others', async () => {
    const agents = await api('GET', '/api/v1/agents?per_page=100');
    const builtIn = agents.data.find((a: { id: string }) => a.id === 'server-scanner');
    expect(builtIn).toBeDefined();
    await go('/agents');
    const row = page.getByRole('row').filter({ hasText: builtIn.name });
    await row.getByText('Built in').waitFor();
    expect(await row.getByRole('button').count()).toBe(0);
    expect(await page.locator('button.danger:visible', { hasText: 'Retire' }).count()).toBe(0);
  });
});
