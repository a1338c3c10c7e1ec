import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { staticResolver } from '@certwright/core/net';
import type { RunningServer } from '@certwright/server';
import Provider from 'oidc-provider';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, httpsCall } from '../../server/test/support/https.js';
import { makeTestPki } from '../../server/test/support/openssl-pki.js';
import { CHROMIUM, haveChromium, launchChromium } from './support/chromium.js';
import { accessible, type ConsoleServer, startConsoleServer } from './support/console.js';

const SECRET = 'web-console-test-secret-0123456789abcdef';

if (!haveChromium)
  console.warn(`skipping the browser test: ${CHROMIUM} is missing (apt-get install chromium)`);

const CLIENT_ID = 'certwright-console';
const CLIENT_SECRET = 'console-client-secret-0123456789abcdef';

/** oidc-provider signing in `alice` (group pki-admins) without a login form, consent granted. */
function startIdp(server: HttpsServer, issuer: string, rp: string): void {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = {
    ...(privateKey.export({ format: 'jwk' }) as Record<string, unknown>),
    kid: 'k1',
    use: 'sig',
    alg: 'RS256',
  };
  const idp = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${rp}/auth/oidc/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [jwk] },
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email'], profile: ['name'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    cookies: { keys: ['idp-cookie-key-0123456789'] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({
        sub: id,
        email: `${id}@example.test`,
        name: 'Alice Operator',
        groups: ['pki-admins'],
      }),
    }),
  } as never);
  server.on('request', async (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      const details = await idp.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        await idp.interactionFinished(
          req,
          res,
          { login: { accountId: 'alice' } },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      const grant = new idp.Grant({ accountId: details.session!.accountId, clientId: CLIENT_ID });
      grant.addOIDCScope('openid email profile groups');
      await idp.interactionFinished(
        req,
        res,
        { consent: { grantId: await grant.save() } },
        { mergeWithLastSubmission: true },
      );
      return;
    }
    idp.callback()(req, res);
  });
}

describe.skipIf(!haveChromium)('the web console in Chromium against the running server', () => {
  const pki = makeTestPki(['server']);
  const ca = readFileSync(pki.ca);
  let server: RunningServer;
  let api: ConsoleServer['api'];
  let browser: Browser;
  let receiver: http.Server;
  let receiverPort: number;
  const received: string[] = [];
  const receivedAuth: (string | undefined)[] = [];
  const cspViolations: string[] = [];
  let idpServer: HttpsServer;
  let idpIssuer: string;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receivedAuth.push(req.headers.authorization);
        received.push(Buffer.concat(chunks).toString('utf8'));
        res.end('received');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverPort = (receiver.address() as AddressInfo).port;
    // The test identity provider (oidc-provider) on its own loopback TLS port, same test CA.
    idpServer = createHttpsServer({
      cert: readFileSync(pki.issued.server!.cert),
      key: readFileSync(pki.issued.server!.key),
    });
    await new Promise<void>((resolve) => idpServer.listen(0, '127.0.0.1', resolve));
    idpIssuer = `https://127.0.0.1:${(idpServer.address() as AddressInfo).port}`;
    ({ server, api } = await startConsoleServer(pki, SECRET, {
      oidc: { ca: ca.toString('utf8') },
      // The identity provider above listens on loopback: the test-only opt-in admits it.
      administratorLoopback: true,
      webhooks: { loopback: 'when-listed', resolve: staticResolver({ 'receiver.test': '127.0.0.1' }) },
    }));
    startIdp(idpServer, idpIssuer, `https://127.0.0.1:${server.port}`);
    browser = await launchChromium(readFileSync(pki.issued.server!.cert));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    idpServer?.closeAllConnections();
    await new Promise<void>((resolve) => (idpServer ? idpServer.close(() => resolve()) : resolve()));
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  });

  it('serves the console with strict headers and keeps the API paths the API’s', async () => {
    const index = await httpsCall(server.port, ca, '/certificates?status=Active');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toMatch(/^text\/html/);
    expect(index.headers['content-security-policy']).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    expect(index.headers['referrer-policy']).toBe('no-referrer');
    expect(index.headers['x-content-type-options']).toBe('nosniff');
    expect(index.headers['cache-control']).toBe('no-cache');
    expect(index.body).not.toMatch(/<script>|<style>| style=/);
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(index.body)?.[1];
    expect(script).toBeDefined();
    const asset = await httpsCall(server.port, ca, script as string);
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await httpsCall(server.port, ca, '/assets/missing.js')).status).toBe(404);
    const unknownApi = await httpsCall(server.port, ca, '/api/v1/no-such-route', { headers: bearer(SECRET) });
    expect(unknownApi.status).toBe(404);
    expect(unknownApi.headers['content-type']).toMatch(/problem\+json/);
    expect((await httpsCall(server.port, ca, '/health')).headers['content-type']).toMatch(/json/);
  });

  it('signs in with the API key and walks the pages: issue, chart, revoke, allowlist, audit export', async () => {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) cspViolations.push(message.text());
    });
    const origin = `https://127.0.0.1:${server.port}`;

    await page.goto(`${origin}/`);
    await page.waitForURL(/\/login$/);
    await page.getByRole('heading', { name: 'Sign in to certwright' }).waitFor();
    await accessible(page, 'sign-in');
    await page.getByLabel('API key', { exact: true }).fill('wrong-key-wrong-key');
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page.getByText('The API key was not accepted.').waitFor();
    await page.getByLabel('API key', { exact: true }).fill(SECRET);
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    expect(await page.evaluate(() => Object.keys(localStorage).length)).toBe(0);

    // Owner, team and issuer through their pages' forms.
    const createThrough = async (
      path: string,
      fields: Record<string, string>,
      submit: string,
      name: string,
    ) => {
      await page.goto(`${origin}${path}`);
      const form = page.locator('form');
      for (const [label, value] of Object.entries(fields))
        await form.getByLabel(label, { exact: true }).fill(value);
      await form.getByRole('button', { name: submit }).click();
      await page.getByText(`Created ${name}.`).waitFor();
      await page.getByRole('cell', { name, exact: true }).waitFor();
    };
    await createThrough(
      '/owners',
      { Name: 'Web Owner', Email: 'owner@example.test' },
      'Create owner',
      'Web Owner',
    );
    await accessible(page, 'owners');
    await createThrough('/teams', { Name: 'Web Team' }, 'Create team', 'Web Team');
    await createThrough('/issuers', { Name: 'Web Local CA' }, 'Create issuer', 'Web Local CA');
    await accessible(page, 'issuers');
    const named = async (path: string, name: string) =>
      (await api('GET', path)).data.find((row: { name: string }) => row.name === name);
    const owner = await named('/api/v1/owners', 'Web Owner');
    const team = await named('/api/v1/teams', 'Web Team');
    const issuer = await named('/api/v1/issuers', 'Web Local CA');
    expect(issuer?.type).toBe('Local');
    const profile = await api('POST', '/api/v1/profiles', { name: 'thirty days', max_validity_days: 30 });
    const policy = await api('POST', '/api/v1/renewal-policies', {
      name: 'web policy',
      renewal_window_days: 7,
    });
    const cert = await api('POST', '/api/v1/certificates', {
      name: 'shop-frontend',
      common_name: 'shop.example.test',
      sans: ['shop.example.test'],
      renewal_policy_id: policy.id,
      issuer_id: issuer.id,
      owner_id: owner.id,
      team_id: team.id,
      profile_id: profile.id,
    });

    // Issue through the detail page's confirmation (unless the issuance worker was faster).
    await page.goto(`${origin}/certificates/${cert.id}`);
    await page.getByRole('heading', { name: /shop-frontend/ }).waitFor();
    const issue = page.getByRole('button', { name: 'Issue', exact: true });
    if (await issue.isVisible()) {
      await issue.click();
      await page.getByRole('button', { name: 'Issue shop-frontend' }).click();
    }
    await page.getByRole('button', { name: 'Renew', exact: true }).waitFor();
    await expect
      .poll(async () => (await api('GET', `/api/v1/certificates/${cert.id}`)).status)
      .toBe('Active');

    // The dashboard's chart counts it within the next 13 weeks, and its week links to the list.
    await page.goto(`${origin}/`);
    const chart = page.getByRole('img', { name: /Certificates expiring in the next 13 weeks/ });
    await chart.waitFor();
    await expect
      .poll(async () =>
        (
          await page
            .locator('svg g[data-count]')
            .evaluateAll((gs) => gs.map((g) => Number(g.getAttribute('data-count'))))
        ).reduce((a, b) => a + b, 0),
      )
      .toBe(1);
    await page.getByRole('link', { name: /: 1 certificate$/ }).waitFor();
    await accessible(page, 'dashboard');

    // The inventory keeps its filters in the URL.
    await page.getByRole('link', { name: 'Certificates', exact: true }).click();
    await page.getByRole('heading', { name: 'Certificates' }).waitFor();
    await page.getByLabel('Status').selectOption('Active');
    await expect.poll(() => decodeURIComponent(page.url())).toMatch(/status=.*Active/);
    await page.getByRole('cell', { name: 'shop-frontend', exact: true }).waitFor();
    await accessible(page, 'inventory');

    // Revoke, with a confirmation that names the certificate.
    await page.getByRole('link', { name: 'shop-frontend' }).click();
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke shop-frontend?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('shop.example.test');
    await accessible(page, 'certificate-revoke-dialog');
    await dialog.getByLabel('Reason').selectOption('superseded');
    await dialog.getByRole('button', { name: 'Revoke shop-frontend' }).click();
    await page.getByText('Certificate revoked.').waitFor();
    expect((await api('GET', `/api/v1/certificates/${cert.id}`)).status).toBe('Revoked');
    await accessible(page, 'certificate');

    // New certificate through the inventory's form, then a bulk renew of the selection.
    await page.goto(`${origin}/certificates`);
    await page.getByRole('button', { name: 'New certificate' }).click();
    const newCert = page.getByRole('form', { name: 'New certificate' });
    await newCert.getByLabel('Name', { exact: true }).fill('web-form-cert');
    await newCert.getByLabel('Common name', { exact: true }).fill('form.example.test');
    await newCert.getByLabel('Issuer', { exact: true }).selectOption({ label: 'Web Local CA' });
    await newCert.getByLabel('Owner', { exact: true }).selectOption({ label: 'Web Owner' });
    await newCert.getByLabel('Team', { exact: true }).selectOption({ label: 'Web Team' });
    await newCert.getByLabel('Renewal policy', { exact: true }).selectOption({ label: 'web policy' });
    await accessible(page, 'certificate-new');
    await newCert.getByRole('button', { name: 'Create certificate' }).click();
    await page.getByRole('heading', { name: /web-form-cert/ }).waitFor();
    await page.goto(`${origin}/certificates?search=web-form-cert`);
    await page.getByRole('checkbox', { name: 'Select web-form-cert' }).check();
    await page.getByText('1 selected').waitFor();
    await page.getByRole('button', { name: 'Renew selected' }).click();
    const bulk = page.getByRole('dialog', { name: 'Renew 1 certificate?' });
    await bulk.getByText('web-form-cert').waitFor();
    await bulk.getByRole('button', { name: 'Renew 1' }).click();
    await bulk.getByText(/^1 of 1 sent/).waitFor();
    await accessible(page, 'certificates-bulk');
    await bulk.getByRole('button', { name: 'Close' }).first().click();

    // Webhook security: the allowlist changes through the form.
    await page.getByRole('link', { name: 'Webhook security' }).click();
    await page.getByLabel(/Allowed private ranges/).fill(`127.0.0.1, 10.20.0.0/16`);
    await page.getByRole('button', { name: 'Save allowlist' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await api('GET', '/api/system/settings/webhook-security')).allowed_private_ranges).toMatch(
      /10\.20\.0\.0\/16/,
    );
    await accessible(page, 'webhook-security');

    // Alerts → Notifications: a webhook to the local receiver, previewed, saved (secret masked), tested.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Alerts → Notifications' }).waitFor();
    const form = page.locator('form');
    await form.getByLabel('Name', { exact: true }).fill('ops chat');
    await form.getByLabel('Kind', { exact: true }).selectOption('generic');
    await form
      .getByLabel('URL', { exact: true })
      .fill(`http://receiver.test:${receiverPort}/hook/{{.ResourceName}}`);
    await form.getByLabel('Revocation').check();
    await form
      .getByLabel('Template', { exact: true })
      .fill('{"text": {{.Message | json}}, "level": "{{.Level}}", "n": {{len .Type}}}');
    await expect
      .poll(() => page.getByTestId('template-preview').textContent())
      .toBe(
        '{"text": "Certificate shop-frontend expires in 5 day(s)", "level": "warning", "n": {{len .Type}}}',
      );
    await form.getByRole('button', { name: 'Add header' }).click();
    await form.getByLabel('Header name 1').fill('Authorization');
    await form.getByLabel('Header value 1').fill('Bearer receiver-token-7f3a');
    await accessible(page, 'notifications-form');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByText('Webhook ops chat created.').waitFor();
    await page.getByRole('cell', { name: 'Authorization: ********' }).waitFor();
    expect(await page.content()).not.toContain('receiver-token-7f3a');
    await page.getByRole('button', { name: 'Test ops chat' }).click();
    await page.getByText('Test of ops chat: delivered').waitFor();
    await page.getByText(/Status 200 in/).waitFor();
    expect(received.length).toBeGreaterThan(0);
    await accessible(page, 'notifications');
    // Edit: the header value arrives masked, is saved untouched, and the stored secret is kept.
    await page.getByRole('button', { name: 'Edit ops chat' }).click();
    await page.getByRole('heading', { name: 'Edit webhook ops chat' }).waitFor();
    expect(await form.getByLabel('Header value 1').inputValue()).toBe('********');
    // The URL is sealed too: it arrives masked after its origin.
    expect(await form.getByLabel('URL', { exact: true }).inputValue()).toBe(
      `http://receiver.test:${receiverPort}/********`,
    );
    await form.getByLabel('URL', { exact: true }).fill(`http://receiver.test:${receiverPort}/edited`);
    await form.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByText('Webhook ops chat saved.').waitFor();
    await page.getByRole('cell', { name: `http://receiver.test:${receiverPort}/********` }).waitFor();
    const before = receivedAuth.length;
    await page.getByRole('button', { name: 'Test ops chat' }).click();
    await expect.poll(() => receivedAuth.length).toBeGreaterThan(before);
    expect(receivedAuth.at(-1)).toBe('Bearer receiver-token-7f3a');
    expect(await page.content()).not.toContain('receiver-token-7f3a');

    // Audit trail and its export.
    await page.getByRole('link', { name: 'Audit trail' }).click();
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    await page.getByRole('cell', { name: /revok/i }).first().waitFor();
    await accessible(page, 'audit');
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: /Export/ }).click(),
    ]);
    const lines = readFileSync((await file.path()) as string, 'utf8')
      .trim()
      .split('\n');
    const actions = lines.map((line) => String(JSON.parse(line).action));
    expect(
      actions.some((action) => /revok/i.test(action)),
      actions.join(', '),
    ).toBe(true);

    // Every other page: it loads its list (no error), is screenshotted and passes axe.
    const lists: [string, string][] = [
      ['/agents', 'Agents'],
      ['/targets', 'Targets'],
      ['/jobs', 'Jobs'],
      ['/notifications', 'Notifications'],
      ['/policies', 'Policy rules'],
      ['/renewal-policies', 'Renewal policies'],
      ['/profiles', 'Profiles'],
      ['/acme-eab-keys', 'ACME EAB keys'],
      ['/acme-accounts', 'ACME accounts'],
      ['/enrollment/est', 'EST'],
      ['/enrollment/scep', 'SCEP'],
      ['/people/users', 'Users'],
      ['/people/sessions', 'Sessions'],
      ['/people/oidc-providers', 'OIDC providers'],
      ['/people/group-mappings', 'OIDC group mappings'],
    ];
    for (const [path, heading] of lists) {
      await page.goto(`${origin}${path}`);
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      await page.locator('table, [role="alert"]').first().waitFor();
      const alerts = await page.getByRole('alert').allTextContents();
      expect(alerts, `${path} shows an error`).toEqual([]);
      await accessible(page, path.slice(1).replaceAll('/', '-'));
    }
    // Discovery: a scan target created through its form is listed; the discovery page loads.
    await page.goto(`${origin}/discovery/targets`);
    await page.getByRole('heading', { name: 'Scan targets', exact: true }).waitFor();
    const targetForm = page.locator('form');
    await targetForm.getByLabel('Name', { exact: true }).fill('Web lab range');
    await targetForm.getByLabel('Address ranges', { exact: true }).fill('192.0.2.0/30');
    await targetForm.getByLabel('Ports', { exact: true }).fill('443, 8443');
    await targetForm.getByRole('button', { name: 'Create scan target' }).click();
    await page.getByText('Created Web lab range.').waitFor();
    await page.getByRole('cell', { name: 'Web lab range', exact: true }).waitFor();
    await page.getByRole('cell', { name: '443, 8443', exact: true }).waitFor();
    await accessible(page, 'discovery-targets');
    await page.goto(`${origin}/discovery`);
    await page.getByRole('heading', { name: 'Discovered certificates' }).waitFor();
    await page.getByRole('heading', { name: 'Scans' }).waitFor();
    await page.locator('table').nth(1).waitFor();
    expect(await page.getByRole('alert').allTextContents(), '/discovery shows an error').toEqual([]);
    await accessible(page, 'discovery');

    // TLS health check: created through the form, checked at once; its page shows the history.
    await page.goto(`${origin}/health-checks`);
    await page.getByRole('heading', { name: 'TLS health checks', exact: true }).waitFor();
    const checkForm = page.locator('form');
    await checkForm.getByLabel('Name', { exact: true }).fill('Web endpoint');
    await checkForm.getByLabel('Host', { exact: true }).fill('endpoint.invalid');
    await checkForm.getByLabel('Port', { exact: true }).fill('443');
    await checkForm.getByLabel('Expected SHA-256 fingerprint', { exact: true }).fill('ab'.repeat(32));
    await checkForm.getByRole('button', { name: 'Create health check' }).click();
    await page.getByText('Created Web endpoint.').waitFor();
    await accessible(page, 'health-checks');
    await page.getByRole('link', { name: 'Web endpoint', exact: true }).click();
    await page.getByRole('heading', { name: 'Web endpoint', exact: true }).waitFor();
    const history = page.getByRole('table', { name: 'Check history' });
    await history.getByRole('cell', { name: 'failed', exact: true }).first().waitFor();
    await accessible(page, 'health-check');
    // One failed handshake does not yet change the status: nothing to acknowledge, and it says so.
    const acknowledge = page.getByRole('button', { name: 'Acknowledge' });
    expect(await acknowledge.isDisabled()).toBe(true);
    expect(await acknowledge.getAttribute('title')).toBe('Nothing to acknowledge: the endpoint is healthy');

    // A profile with a SCEP block: the challenge password is gone from the page once saved.
    await page.goto(`${origin}/profiles`);
    const profileForm = page.getByRole('form', { name: 'New profile' });
    await profileForm.getByLabel('Name', { exact: true }).fill('web enrollment');
    await profileForm.getByLabel('SCEP enabled').check();
    await profileForm.getByLabel('Issuer', { exact: true }).selectOption({ label: 'Web Local CA' });
    await profileForm.getByLabel('Owner', { exact: true }).selectOption({ label: 'Web Owner' });
    await profileForm.getByLabel('Team', { exact: true }).selectOption({ label: 'Web Team' });
    await profileForm.getByLabel('Renewal policy', { exact: true }).selectOption({ label: 'web policy' });
    await profileForm.getByLabel('Challenge password', { exact: true }).fill('scep-secret-91c2');
    await profileForm.getByRole('button', { name: 'Create profile' }).click();
    await page.getByText('Created web enrollment.').or(page.getByRole('alert')).first().waitFor();
    expect(await page.getByRole('alert').allTextContents(), 'profile create').toEqual([]);
    const profileRow = page.getByRole('row').filter({ hasText: 'web enrollment' });
    await profileRow.getByRole('cell', { name: 'SCEP', exact: true }).waitFor();
    await profileRow.getByRole('cell', { name: 'set', exact: true }).waitFor();
    expect(await profileForm.getByLabel('Challenge password', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain('scep-secret-91c2');

    await page.goto(`${origin}/people/breakglass`);
    await page.getByText('Break-glass sign-in is off on this server.').waitFor();
    await accessible(page, 'people-breakglass');
    await page.goto(`${origin}/issuers`);
    await page.getByRole('cell', { name: 'Web Local CA' }).waitFor();

    // At 390 px the navigation folds behind the menu button.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${origin}/`);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Audit trail' }).waitFor();
    await accessible(page, 'dashboard-390');

    expect(cspViolations).toEqual([]);
    await context.close();
  });

  it('signs in through the identity provider: a session with the operator role sees only what it may do', async () => {
    const origin = `https://127.0.0.1:${server.port}`;
    await api('POST', '/api/v1/auth/oidc/providers', {
      id: 'corp',
      name: 'Corp IdP',
      issuer: idpIssuer,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      scopes: ['openid', 'email', 'profile', 'groups'],
      redirect_uri: `${origin}/auth/oidc/callback`,
      post_login_url: '/',
    });
    await api('POST', '/api/v1/auth/oidc/group-mappings', {
      provider_id: 'corp',
      group: 'pki-admins',
      role: 'operator',
    });
    const [first] = (await api('GET', '/api/v1/certificates?search=shop-frontend')).data;
    const owner = await api('POST', '/api/v1/owners', { name: 'Second Owner', email: 'second@example.test' });
    const second = await api('POST', '/api/v1/certificates', {
      name: 'billing-api',
      common_name: 'billing.example.test',
      sans: ['billing.example.test'],
      renewal_policy_id: first.renewal_policy_id,
      issuer_id: first.issuer_id,
      owner_id: owner.id,
      team_id: first.team_id,
      profile_id: first.profile_id,
    });
    if ((await api('GET', `/api/v1/certificates/${second.id}`)).status === 'Pending') {
      await api('POST', `/api/v1/certificates/${second.id}/issue`, {});
    }

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${origin}/login`);
    await page.getByRole('link', { name: 'Sign in with Corp IdP' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByText('Alice Operator').waitFor();
    expect((await context.cookies()).map((c) => c.name)).toEqual(
      expect.arrayContaining(['__Host-cw_session', '__Host-cw_csrf']),
    );
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // The operator role holds no audit or webhook permission: those pages are not offered.
    const nav = page.getByRole('navigation', { name: 'Primary' });
    await nav.getByRole('link', { name: 'Certificates' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Audit trail' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Webhook security' }).count()).toBe(0);
    await accessible(page, 'oidc-dashboard');

    // Revoke is disabled with the reason; renew works through the cookie session (CSRF header).
    await page.goto(`${origin}/certificates/${second.id}`);
    const revoke = page.getByRole('button', { name: 'Revoke', exact: true });
    await revoke.waitFor();
    expect(await revoke.isDisabled()).toBe(true);
    expect(await revoke.getAttribute('title')).toBe('You need the permission cert.revoke');
    await page.getByRole('button', { name: 'Renew', exact: true }).click();
    await page.getByRole('button', { name: 'Renew billing-api' }).click();
    await page.getByText('Renewal started.').waitFor();
    await accessible(page, 'oidc-certificate');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login$/);
    expect((await context.cookies()).filter((c) => c.name === '__Host-cw_session')).toEqual([]);
    await context.close();
  });
});
