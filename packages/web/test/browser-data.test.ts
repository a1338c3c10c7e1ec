import { readFileSync } from 'node:fs';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki } from '../../server/test/support/openssl-pki.js';
import { CHROMIUM, haveChromium, launchChromium } from './support/chromium.js';
import { accessible, type ConsoleServer, signInWithKey, startConsoleServer } from './support/console.js';

const SECRET = 'web-data-test-secret-0123456789abcdef';

if (!haveChromium)
  console.warn(`skipping the browser data test: ${CHROMIUM} is missing (apt-get install chromium)`);

/**
 * What the console shows about records: related records by name and linked (one names request
 * per page), the inventory's chosen columns, the decoded certificate view and its downloads,
 * and the configuration forms. One server, one browser, one signed-in page, steps in order.
 */
describe.skipIf(!haveChromium)('the console names, decodes and configures in Chromium', () => {
  const pki = makeTestPki(['server']);
  let running: ConsoleServer;
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];

  const api = (method: string, path: string, body?: unknown) => running.api(method, path, body);
  const go = (path: string) => page.goto(`${running.origin}${path}`);
  /** The API paths the page asked for since the last call (query strings dropped). */
  const asked = () => requests.splice(0).map((url) => new URL(url).pathname);

  beforeAll(async () => {
    running = await startConsoleServer(pki, SECRET);
    browser = await launchChromium(readFileSync(pki.issued.server!.cert));
    const context = await browser.newContext({
      viewport: { width: 1366, height: 900 },
      acceptDownloads: true,
    });
    page = await context.newPage();
    page.on('request', (r: Request) => {
      if (r.url().includes('/api/v1/')) requests.push(r.url());
    });
    await signInWithKey(page, running.origin, SECRET);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await running?.server.close();
  });

  it('names issuers, owners and teams in the inventory with one names request, in the columns the user chose', async () => {
    const issuer = await api('POST', '/api/v1/issuers', { name: 'Names CA', type: 'Local' });
    const owner = await api('POST', '/api/v1/owners', { name: 'Nadia Owner', email: 'nadia@example.test' });
    const team = await api('POST', '/api/v1/teams', { name: 'Names Team' });
    const policy = (await api('GET', '/api/v1/renewal-policies')).data[0];
    for (const n of [1, 2, 3]) {
      const cert = await api('POST', '/api/v1/certificates', {
        name: `named-${n}`,
        common_name: `named-${n}.example.test`,
        issuer_id: issuer.id,
        owner_id: owner.id,
        team_id: team.id,
        renewal_policy_id: policy.id,
        environment: 'prod',
      });
      await api('POST', `/api/v1/certificates/${cert.id}/issue`, {});
    }

    asked();
    await go('/certificates?search=named-');
    const row = page.getByRole('row').filter({ hasText: 'named-1.example.test' });
    await row.getByRole('link', { name: 'Names CA' }).waitFor();
    await row.getByRole('link', { name: 'Nadia Owner' }).waitFor();
    await row.getByRole('link', { name: 'Names Team' }).waitFor();
    // Relative and absolute expiry in one cell.
    expect(await row.locator('td[data-label="Expires"]').innerText()).toMatch(/^in \d+ (days|months)/);
    // Three rows, one list request and one names request — not one per row.
    const paths = asked();
    expect(paths.filter((p) => p === '/api/v1/names')).toHaveLength(1);
    expect(paths.filter((p) => p.startsWith('/api/v1/issuers') || p.startsWith('/api/v1/owners'))).toEqual(
      [],
    );
    await accessible(page, 'data-inventory-names');

    // Hide Source, move Owner before Status: the URL and this browser keep the choice.
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('checkbox', { name: 'Source' }).uncheck();
    for (let i = 0; i < 3; i += 1) await page.getByRole('button', { name: 'Move Owner left' }).click();
    const headers = async () =>
      (await page.getByRole('columnheader').allInnerTexts()).map((h) => h.replace(/[▲▼]/g, '').trim());
    await expect
      .poll(headers)
      .toEqual([
        'Select',
        'Name',
        'Common name',
        'Owner',
        'Status',
        'Expires',
        'Issuer',
        'Team',
        'Environment',
      ]);
    expect(new URL(page.url()).searchParams.get('cols')).toBe('name,cn,owner,status,expires,issuer,team,env');
    await accessible(page, 'data-inventory-columns');
    await go('/certificates');
    await expect
      .poll(headers)
      .toEqual([
        'Select',
        'Name',
        'Common name',
        'Owner',
        'Status',
        'Expires',
        'Issuer',
        'Team',
        'Environment',
      ]);

    // The owner link opens the inventory filtered to the owner.
    await page
      .getByRole('row')
      .filter({ hasText: 'named-2.example.test' })
      .getByRole('link', { name: 'Nadia Owner' })
      .click();
    await page.waitForURL((url) => url.searchParams.get('owner_id') === owner.id);
  });

  it('shows the certificate’s, the jobs’ and the audit trail’s related records by name, the actor once', async () => {
    const cert = (await api('GET', '/api/v1/certificates?search=named-1')).data[0];
    asked();
    await go(`/certificates/${cert.id}`);
    const details = page.getByRole('region', { name: 'Details' });
    await details.getByRole('link', { name: 'Names CA' }).waitFor();
    await details.getByRole('link', { name: 'Nadia Owner' }).waitFor();
    await details.getByRole('link', { name: 'Names Team' }).waitFor();
    await page
      .getByRole('region', { name: 'Audit trail' })
      .getByRole('cell', { name: 'admin (API key)' })
      .first()
      .waitFor();
    expect(asked().filter((p) => p === '/api/v1/names')).toHaveLength(1);

    await go('/jobs');
    const job = page.getByRole('row').filter({ hasText: 'Issuance' }).filter({ hasText: 'named-1' });
    await job.getByRole('link', { name: 'named-1' }).waitFor();
    await accessible(page, 'data-jobs');

    await go('/audit');
    const created = page.getByRole('row').filter({ hasText: 'certificate_created' }).first();
    await created.getByRole('cell', { name: 'admin (API key)' }).waitFor();
    await created.getByRole('link', { name: /^named-\d$/ }).waitFor();
    expect(await page.getByRole('cell', { name: /api_key/ }).count()).toBe(0);
    await accessible(page, 'data-audit');
  });
});
