import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOpensslText } from '../../core/test/pki/support/openssl-text.js';
import { bearer, httpsCall } from '../../server/test/support/https.js';
import { makeTestPki } from '../../server/test/support/openssl-pki.js';
import { CHROMIUM, haveChromium, launchChromium } from './support/chromium.js';
import {
  type ConsoleServer,
  accessible as noSeriousViolation,
  signInWithKey,
  startConsoleServer,
} from './support/console.js';

const SECRET = 'web-data-test-secret-0123456789abcdef';
const work = mkdtempSync(join(tmpdir(), 'cw-web-data-'));

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: work, encoding: 'utf8' });

/** What OpenSSL reads from a PEM certificate: -text, both fingerprints. */
function opensslOf(pem: string) {
  const file = join(work, `c-${Date.now()}-${Math.random()}.pem`);
  writeFileSync(file, pem);
  const text = openssl(
    'x509',
    '-in',
    file,
    '-noout',
    '-text',
    '-nameopt',
    'RFC2253',
    '-fingerprint',
    '-sha256',
  );
  return parseOpensslText(`${text}\n${openssl('x509', '-in', file, '-noout', '-fingerprint', '-sha1')}`);
}

/** The value of a term of a decoded view (`<dt>term</dt><dd>…</dd>`); the code of a copyable one. */
async function field(scope: Locator, term: string): Promise<string> {
  const dd = scope.locator(`xpath=.//dt[normalize-space()="${term}"]/following-sibling::dd[1]`).first();
  const code = dd.locator('code');
  return (await code.count()) > 0 ? (await code.first().innerText()).trim() : (await dd.innerText()).trim();
}
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * The pages this file adds are held to axe-core's whole rule set: no violation of any impact
 * (the shared check, which also screenshots the page, fails on serious and critical ones).
 */
async function accessible(page: Page, name: string) {
  await noSeriousViolation(page, name);
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run: (
            o: unknown,
          ) => Promise<{ violations: { id: string; impact: string; nodes: { target: unknown }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run({ resultTypes: ['violations'] });
    return result.violations.map(
      (v) => `${v.id} (${v.impact}) at ${JSON.stringify(v.nodes.map((n) => n.target))}`,
    );
  });
  expect(violations, `axe on ${name}`).toEqual([]);
}

const colons = (hex: string | null) => hex?.toUpperCase().match(/../g)?.join(':') ?? '—';

/**
 * The decoded view against OpenSSL: every field the console shows, read off the page, equals
 * what `openssl x509 -text` reads from the same certificate.
 */
async function expectDecodedAsOpenssl(scope: Locator, pem: string) {
  const o = opensslOf(pem);
  expect(await field(scope, 'Subject')).toBe(o.subject);
  expect(await field(scope, 'Issuer')).toBe(o.issuer);
  expect((await field(scope, 'Serial number')).replace(/:/g, '').toLowerCase().replace(/^0+/, '')).toBe(
    o.serial,
  );
  expect(await field(scope, 'SHA-256 fingerprint')).toBe(colons(o.sha256));
  expect(await field(scope, 'SHA-1 fingerprint')).toBe(colons(o.sha1));
  expect(await field(scope, 'Subject key identifier')).toBe(o.subjectKeyIdentifier ?? '—');
  expect(await field(scope, 'Authority key identifier')).toBe(o.authorityKeyIdentifier ?? '—');
  const dns = o.sans.filter((n) => n.startsWith('DNS:')).map((n) => n.slice(4));
  expect((await field(scope, 'DNS names')).split('\n').filter((l) => l !== '—')).toEqual(dns);
  const ips = o.sans.filter((n) => n.startsWith('IP Address:')).map((n) => n.slice('IP Address:'.length));
  expect((await field(scope, 'IP addresses')).split('\n').filter((l) => l !== '—')).toEqual(ips);
  expect(await field(scope, 'Key usage')).toBe(o.keyUsage?.join(', ') ?? '—');
  expect(await field(scope, 'Extended key usage')).toBe(o.extendedKeyUsage?.join(', ') ?? '—');
  const bc = await field(scope, 'Basic constraints');
  if (o.basicConstraints === null) expect(bc).toBe('—');
  else {
    expect(bc.startsWith(o.basicConstraints.startsWith('CA:TRUE') ? 'CA: yes' : 'CA: no')).toBe(true);
    const pathlen = /pathlen:(\d+)/.exec(o.basicConstraints)?.[1];
    if (pathlen) expect(bc).toContain(`path length ${pathlen}`);
  }
  expect((await field(scope, 'CRL distribution points')).split('\n').filter((l) => l !== '—')).toEqual(
    o.crlDistributionPoints,
  );
  expect((await field(scope, 'OCSP')).split('\n').filter((l) => l !== '—')).toEqual(o.ocsp);
  expect((await field(scope, 'CA issuers')).split('\n').filter((l) => l !== '—')).toEqual(o.caIssuers);
  expect((await field(scope, 'Policies')).split('\n').filter((l) => l !== '—')).toEqual(o.policies);
  expect(await field(scope, 'Public key')).toContain(`(${o.publicKeyBits} bit)`);
  if (o.curve) expect(await field(scope, 'Public key')).toContain(o.curve);
  const validity = await scope.locator('.validity').innerText();
  expect(validity).toMatch(/% used|expired|not yet valid/);
  return o;
}

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
    await expect.poll(headers).toEqual([
      // The select-all box, labelled for screen readers, shows no text.
      '',
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
    await expect.poll(headers).toEqual([
      // The select-all box, labelled for screen readers, shows no text.
      '',
      'Name',
      'Common name',
      'Owner',
      'Status',
      'Expires',
      'Issuer',
      'Team',
      'Environment',
    ]);

    // The owner link opens the inventory filtered to the owner, which the page names (with its
    // rows' names) and lets go of.
    asked();
    await page
      .getByRole('row')
      .filter({ hasText: 'named-2.example.test' })
      .getByRole('link', { name: 'Nadia Owner' })
      .click();
    await page.waitForURL((url) => url.searchParams.get('owner_id') === owner.id);
    await page.getByText('Showing certificates of owner Nadia Owner').waitFor();
    await expect.poll(async () => (await page.getByRole('row').count()) - 1).toBe(3);
    // At most one: here none, the names of these rows being known from the last page.
    expect(asked().filter((p) => p === '/api/v1/names').length).toBeLessThanOrEqual(1);
    await page.getByRole('button', { name: 'Remove the owner filter' }).click();
    await page.waitForURL((url) => !url.searchParams.has('owner_id'));
  });

  it('counts certificates by status on the dashboard from the one summary request, each count linking to its list', async () => {
    const active = page.locator('.status-counts li').filter({ hasText: 'Active' });
    const shown = async () => (await active.locator('.count').textContent())?.trim();
    // Issuance from the test before may still be finishing: reload until the count holds still.
    await expect
      .poll(async () => {
        await go('/');
        await active.locator('.count').waitFor();
        const summary = await api('GET', '/api/v1/dashboard/summary');
        return (await shown()) === String(summary.certificates.by_status.Active);
      })
      .toBe(true);
    asked();
    await go('/');
    await active.locator('.count').waitFor();
    // The panel reads the summary the "needs attention" panel also reads: no list request per status.
    const paths = asked();
    expect(paths.filter((p) => p === '/api/v1/certificates')).toEqual([]);
    expect(paths.filter((p) => p === '/api/v1/dashboard/summary')).toHaveLength(1);
    await active.getByRole('link').click();
    await page.waitForURL((url) => url.pathname === '/certificates' && url.search.includes('Active'));
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

  /** Clicks a download button and answers the saved file's path. */
  async function downloaded(scope: Locator, name: string | RegExp): Promise<string> {
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      scope.getByRole('button', { name, exact: typeof name === 'string' }).click(),
    ]);
    const path = join(work, `${Date.now()}-${file.suggestedFilename()}`);
    await file.saveAs(path);
    return path;
  }

  it('decodes every version and chain certificate as openssl does, copies, and downloads PEM, DER, chain and PKCS#12 that openssl opens', async () => {
    const cert = (await api('GET', '/api/v1/certificates?search=named-1')).data[0];
    const [version] = (await api('GET', `/api/v1/certificates/${cert.id}/versions`)).data;
    await go(`/certificates/${cert.id}`);
    const view = page.getByRole('region', { name: `Version ${version.serial_number} decoded` });
    await view.getByText('SHA-256 fingerprint').waitFor();
    const o = await expectDecodedAsOpenssl(view, version.cert_pem);
    expect(o.subject).toBe('CN=named-1.example.test');
    await accessible(page, 'data-certificate-decoded');

    // Copy: the clipboard holds the fingerprint as shown.
    // Copy: what the page hands the clipboard is the fingerprint as shown. (Headless Chromium
    // refuses clipboard reads to the test, so the write is recorded on its way.)
    await page.evaluate(() => {
      const copied: string[] = [];
      const write = navigator.clipboard.writeText.bind(navigator.clipboard);
      Object.assign(globalThis, { copied });
      navigator.clipboard.writeText = (text: string) => {
        copied.push(text);
        return write(text);
      };
    });
    await view.getByRole('button', { name: 'Copy SHA-256 fingerprint' }).click();
    await view.getByText('Copied').first().waitFor();
    expect(await page.evaluate(() => (globalThis as unknown as { copied: string[] }).copied)).toEqual([
      colons(o.sha256),
    ]);

    // Each download is what openssl reads back.
    const pem = await downloaded(view, 'Download PEM');
    expect(openssl('x509', '-in', pem, '-noout', '-fingerprint', '-sha256').trim()).toBe(
      `sha256 Fingerprint=${colons(o.sha256)}`,
    );
    const der = await downloaded(view, 'Download DER');
    expect(openssl('x509', '-inform', 'DER', '-in', der, '-noout', '-fingerprint', '-sha256').trim()).toBe(
      `sha256 Fingerprint=${colons(o.sha256)}`,
    );
    const chain = await downloaded(view, 'Download chain (PEM)');
    const root = join(work, 'root.pem');
    const chainCerts = readFileSync(chain, 'utf8').match(
      /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g,
    )!;
    writeFileSync(root, chainCerts.at(-1)!);
    expect(openssl('verify', '-CAfile', root, '-untrusted', chain, pem).trim()).toBe(`${pem}: OK`);
    const full = await downloaded(view, 'Download certificate with chain (PEM)');
    expect(readFileSync(full, 'utf8').match(/BEGIN CERTIFICATE/g)).toHaveLength(chainCerts.length + 1);

    // PKCS#12: the password is asked in a dialog and sent in the body; openssl opens the file
    // with it, and its key belongs to the certificate.
    const posted: { url: string; body: string | null }[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/export')) posted.push({ url: r.url(), body: r.postData() });
    });
    await view.getByRole('button', { name: 'Download PKCS#12 (with key)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Export named-1 with its private key' });
    await dialog.getByLabel('Password', { exact: true }).fill('short');
    await dialog.getByLabel('Password again', { exact: true }).fill('short');
    await dialog.getByRole('button', { name: 'Export PKCS#12' }).click();
    // The API's refusal is shown at the field it names.
    await dialog.locator('.field-error').first().waitFor();
    expect(await dialog.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await accessible(page, 'data-pkcs12-dialog');
    const password = 'correct horse battery';
    await dialog.getByLabel('Password', { exact: true }).fill(password);
    await dialog.getByLabel('Password again', { exact: true }).fill(password);
    const [p12file] = await Promise.all([
      page.waitForEvent('download'),
      dialog.getByRole('button', { name: 'Export PKCS#12' }).click(),
    ]);
    const p12 = join(work, 'named-1.p12');
    await p12file.saveAs(p12);
    await page.getByText(/^Exported named-1 as PKCS#12/).waitFor();
    expect(posted.every((p) => !p.url.includes(password) && !new URL(p.url).search)).toBe(true);
    expect(posted.at(-1)?.body).toContain(password);
    const certOut = openssl('pkcs12', '-in', p12, '-passin', `pass:${password}`, '-nokeys', '-clcerts');
    writeFileSync(join(work, 'p12-cert.pem'), certOut);
    expect(
      openssl('x509', '-in', join(work, 'p12-cert.pem'), '-noout', '-fingerprint', '-sha256').trim(),
    ).toBe(`sha256 Fingerprint=${colons(o.sha256)}`);
    const keyOut = openssl('pkcs12', '-in', p12, '-passin', `pass:${password}`, '-nocerts', '-nodes');
    writeFileSync(join(work, 'p12-key.pem'), keyOut);
    expect(openssl('pkey', '-in', join(work, 'p12-key.pem'), '-pubout')).toBe(
      openssl('x509', '-in', join(work, 'p12-cert.pem'), '-noout', '-pubkey'),
    );

    // The chain's CA certificates, one at a time, decoded as openssl reads them.
    for (const [i, caPem] of chainCerts.entries()) {
      const caName = opensslOf(caPem).subject.replace(/^CN=([^,]+).*$/, '$1');
      await view
        .getByRole('group', { name: /certificate shown/ })
        .getByRole('button', { name: caName })
        .click();
      await expect.poll(() => field(view, 'Subject')).toBe(opensslOf(caPem).subject);
      await expectDecodedAsOpenssl(view, caPem);
      if (i === 0) await accessible(page, 'data-certificate-chain-decoded');
    }
  });

  it("decodes an issuer's CA chain on its page and a discovered certificate with its served chain", async () => {
    const issuer = (await api('GET', '/api/v1/issuers?search=Names%20CA')).data[0];
    await go(`/issuers/${issuer.id}`);
    const chainView = page.getByRole('region', { name: 'CA chain' });
    await chainView.getByText('SHA-256 fingerprint').waitFor();
    const chainFile = await downloaded(page.locator('main'), 'Download CA chain (PEM)');
    const caPems = readFileSync(chainFile, 'utf8').match(
      /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g,
    )!;
    await expectDecodedAsOpenssl(chainView, caPems[0]!);
    await accessible(page, 'data-issuer');

    // An agent reports a certificate and its chain from a file on its host.
    const agent = await api('POST', '/api/v1/agents', {
      name: 'reporter',
      hostname: 'reporter.example.test',
    });
    const served = readFileSync(pki.issued.server!.cert, 'utf8') + readFileSync(pki.ca, 'utf8');
    const report = await httpsCall(
      running.server.port,
      readFileSync(pki.ca),
      `/api/v1/agents/${agent.id}/discoveries`,
      {
        method: 'POST',
        headers: bearer(agent.api_key),
        body: { certificates: [{ path: '/etc/ssl/served.pem', pem: served }] },
      },
    );
    expect(report.status, report.body).toBe(201);
    const found = (await api('GET', '/api/v1/discovery/certificates?status=unmanaged')).data[0];
    await go('/discovery');
    await page.getByRole('link', { name: found.subject }).click();
    await page.getByRole('heading', { name: found.subject }).waitFor();
    await page.getByText('seen by').getByRole('link', { name: 'reporter' }).waitFor();
    const decoded = page.getByRole('region', { name: 'Decoded' });
    await decoded.getByText('SHA-256 fingerprint').waitFor();
    await expectDecodedAsOpenssl(decoded, readFileSync(pki.issued.server!.cert, 'utf8'));
    await decoded.getByRole('button', { name: 'certwright test CA' }).click();
    await expect.poll(() => field(decoded, 'Subject')).toBe('CN=certwright test CA');
    await expectDecodedAsOpenssl(decoded, readFileSync(pki.ca, 'utf8'));
    await accessible(page, 'data-discovered');
  });

  /** Chooses `option` in the field labelled `label`: a select, or a combobox offering options. */
  async function choose(scope: Locator, label: string, option: string) {
    const control = scope.getByLabel(label, { exact: true });
    if ((await control.evaluate((el) => el.tagName)) === 'SELECT') {
      await control.selectOption({ label: option });
      return;
    }
    await control.fill(option);
    await scope.getByRole('option', { name: option, exact: true }).click();
  }

  it('creates a Local issuer with its key algorithm and validity and an ACME issuer in the UI, each refusal at its field; disables and enables it', async () => {
    await go('/issuers');
    const form = page.getByRole('form', { name: 'New issuer' });
    await form.getByLabel('Name', { exact: true }).fill('UI Local CA');
    await form.getByLabel('Key algorithm', { exact: true }).selectOption('ECDSA-P384');
    await form.getByLabel('Root validity (days)', { exact: true }).fill('400');
    await form.getByLabel('Issuing CA validity (days)', { exact: true }).fill('800');
    await form.getByRole('button', { name: 'Create issuer' }).click();
    // The API's refusal sits at the field it names, and nothing was created.
    const issuing = form.getByLabel('Issuing CA validity (days)', { exact: true });
    await expect.poll(() => issuing.getAttribute('aria-invalid')).toBe('true');
    await form.getByText("800 days would outlive the root's 400; at most 400").waitFor();
    await accessible(page, 'data-issuer-form-error');
    expect((await api('GET', '/api/v1/issuers?search=UI%20Local')).total).toBe(0);
    await issuing.fill('200');
    await form.getByRole('button', { name: 'Create issuer' }).click();
    await page.getByRole('status').getByRole('link', { name: 'UI Local CA' }).click();
    await page.getByRole('heading', { name: /^UI Local CA/ }).waitFor();
    const chain = page.getByRole('region', { name: 'CA chain' });
    await chain.getByText('SHA-256 fingerprint').waitFor();
    expect(await field(chain, 'Public key')).toContain('P-384');
    const local = (await api('GET', '/api/v1/issuers?search=UI%20Local')).data[0];
    const decoded = (await api('GET', `/api/v1/issuers/${local.id}/chain/details`)).chain;
    const days = (c: { not_before: string; not_after: string }) =>
      Math.round((Date.parse(c.not_after) - Date.parse(c.not_before)) / 86_400_000);
    expect(decoded.map(days)).toEqual([200, 400]);

    // Disable, through a confirmation naming it; then enable again.
    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    await page
      .getByRole('dialog', { name: 'Disable UI Local CA?' })
      .getByRole('button', { name: 'Disable UI Local CA' })
      .click();
    await page.getByText('UI Local CA is disabled.').waitFor();
    expect((await api('GET', `/api/v1/issuers/${local.id}`)).enabled).toBe(false);
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await page
      .getByRole('dialog', { name: 'Enable UI Local CA?' })
      .getByRole('button', { name: 'Enable UI Local CA' })
      .click();
    await page.getByText('UI Local CA is enabled.').waitFor();
    expect((await api('GET', `/api/v1/issuers/${local.id}`)).enabled).toBe(true);

    // An external ACME CA: directory and EAB; a bad URL is refused at its field. (Loopback
    // only: creating an ACME issuer contacts nothing, and the test never uses it.)
    await go('/issuers');
    await form.getByLabel('Name', { exact: true }).fill('UI ACME CA');
    await form.getByLabel('Type', { exact: true }).selectOption('ACME');
    await form.getByLabel('Directory URL', { exact: true }).fill('ftp://127.0.0.1:9/directory');
    await form.getByLabel('EAB key id', { exact: true }).fill('kid-1');
    await form.getByLabel('EAB HMAC key', { exact: true }).fill('c2VjcmV0LWhtYWMta2V5LWZvci10ZXN0cw');
    await form.getByRole('button', { name: 'Create issuer' }).click();
    const directory = form.getByLabel('Directory URL', { exact: true });
    await expect.poll(() => directory.getAttribute('aria-invalid')).toBe('true');
    await directory.fill('https://127.0.0.1:9/directory');
    await form.getByRole('button', { name: 'Create issuer' }).click();
    await page.getByRole('status').getByRole('link', { name: 'UI ACME CA' }).waitFor();
    const acme = (await api('GET', '/api/v1/issuers?search=UI%20ACME')).data[0];
    expect([acme.type, JSON.stringify(acme)]).toEqual(['ACME', expect.not.stringContaining('c2VjcmV0')]);
    await accessible(page, 'data-issuers');
  });

  it('registers an agent: its key shown once with install commands that carry it, the key working', async () => {
    await go('/agents');
    const form = page.getByRole('form', { name: 'Register an agent' });
    await form.getByLabel('Name', { exact: true }).fill('ui-agent');
    await form.getByLabel('Host name', { exact: true }).fill('ui-agent.example.test');
    await form.getByRole('button', { name: 'Register agent' }).click();
    const shown = page.getByRole('status').filter({ hasText: 'Its key is shown this once' });
    await shown.waitFor();
    const key = await field(shown, 'Agent key');
    const id = await field(shown, 'Agent id');
    const commands = await page.getByTestId('install-commands').innerText();
    expect(commands).toContain(`SVC_AGENT_ID=${id}`);
    expect(commands).toContain(`printf '%s' '${key}' > /etc/certwright-agent/agent.key`);
    expect(commands).toContain(`SVC_SERVER_URL=${running.origin}`);
    await accessible(page, 'data-agent-registered');
    // The key is the agent's: its heartbeat is accepted.
    const beat = await httpsCall(
      running.server.port,
      readFileSync(pki.ca),
      `/api/v1/agents/${id}/heartbeat`,
      {
        method: 'POST',
        headers: bearer(key),
        body: {},
      },
    );
    expect(beat.status, beat.body).toBe(200);
    // Shown once: after a reload the page has no trace of it.
    await page.reload();
    await page.getByRole('cell', { name: 'ui-agent', exact: true }).waitFor();
    expect(await page.content()).not.toContain(key);
  });

  it('creates a user with roles, refuses a taken subject at its field, and changes the roles', async () => {
    await go('/people/users');
    const form = page.getByRole('form', { name: 'New user' });
    await form.getByLabel('Subject', { exact: true }).fill('frank');
    await form.getByLabel('Display name', { exact: true }).fill('Frank Ops');
    await form.getByLabel('E-mail', { exact: true }).fill('frank@example.test');
    await form.getByRole('checkbox', { name: /^operator/ }).check();
    await form.getByRole('button', { name: 'Create user' }).click();
    await page.getByText('Created Frank Ops.').waitFor();
    await page.getByRole('cell', { name: 'Frank Ops', exact: true }).waitFor();
    const frank = (await api('GET', '/api/v1/auth/users')).data.find(
      (u: { subject: string }) => u.subject === 'frank',
    );
    expect((await api('GET', `/api/v1/auth/users/${frank.id}/roles`)).roles).toEqual(['operator']);

    await form.getByLabel('Subject', { exact: true }).fill('frank');
    await form.getByRole('button', { name: 'Create user' }).click();
    await form.getByText('taken as a local user').waitFor();
    expect(await form.getByLabel('Subject', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await accessible(page, 'data-users');

    await page.getByRole('button', { name: 'Roles of Frank Ops' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roles of Frank Ops' });
    await expect.poll(() => dialog.getByRole('checkbox', { name: /^operator/ }).isChecked()).toBe(true);
    await dialog.getByRole('checkbox', { name: /^auditor/ }).check();
    await accessible(page, 'data-user-roles');
    await dialog.getByRole('button', { name: 'Save roles' }).click();
    await page.getByText('Frank Ops now has auditor, operator.').waitFor();
    expect((await api('GET', `/api/v1/auth/users/${frank.id}/roles`)).roles).toEqual(['auditor', 'operator']);
  });

  it('creates a certificate through the form and sees it Active with its issuer and owner names', async () => {
    await go('/certificates');
    await page.getByRole('button', { name: 'New certificate' }).click();
    const form = page.getByRole('form', { name: 'New certificate' });
    await form.getByLabel('Name', { exact: true }).fill('ui-made');
    await form.getByLabel('Common name', { exact: true }).fill('ui-made.example.test');
    await choose(form, 'Issuer', 'UI Local CA');
    await choose(form, 'Owner', 'Nadia Owner');
    await choose(form, 'Team', 'Names Team');
    await choose(form, 'Renewal policy', 'Default');
    await form.getByRole('button', { name: 'Create certificate' }).click();
    await page.getByRole('heading', { name: /^ui-made/ }).waitFor();
    await page.getByRole('button', { name: 'Issue', exact: true }).click();
    await page
      .getByRole('dialog', { name: 'Issue ui-made?' })
      .getByRole('button', { name: 'Issue ui-made' })
      .click();
    await page.getByRole('heading', { name: 'ui-made Active' }).waitFor();
    const details = page.getByRole('region', { name: 'Details' });
    await details.getByRole('link', { name: 'UI Local CA' }).waitFor();
    await details.getByRole('link', { name: 'Nadia Owner' }).waitFor();
    await accessible(page, 'data-certificate-created');
  });

  it('configures an OIDC provider, a group mapping and an ACME EAB key whose secret is shown once', async () => {
    await go('/people/oidc-providers');
    const provider = page.getByRole('form', { name: 'New OIDC provider' });
    await provider.getByLabel('Name', { exact: true }).fill('Corp IdP');
    await provider.getByLabel('Issuer URL', { exact: true }).fill('http://127.0.0.1:9');
    await provider.getByLabel('Client id', { exact: true }).fill('certwright');
    await provider.getByLabel('Client secret', { exact: true }).fill('client-secret-value');
    await provider.getByRole('checkbox', { name: 'Enabled' }).uncheck();
    await provider.getByRole('button', { name: 'Add provider' }).click();
    const issuer = provider.getByLabel('Issuer URL', { exact: true });
    await expect.poll(() => issuer.getAttribute('aria-invalid')).toBe('true');
    await issuer.fill('https://127.0.0.1:9');
    await provider.getByRole('button', { name: 'Add provider' }).click();
    await page.getByText(/^Added Corp IdP\./).waitFor();
    await page.getByRole('cell', { name: 'set (write-only)' }).waitFor();
    expect(await page.content()).not.toContain('client-secret-value');
    await accessible(page, 'data-oidc-providers');

    await go('/people/group-mappings');
    const mapping = page.getByRole('form', { name: 'New group mapping' });
    await mapping.getByLabel('Provider', { exact: true }).selectOption({ label: 'Corp IdP' });
    await mapping.getByLabel('Group', { exact: true }).fill('pki-operators');
    await mapping.getByLabel('Role', { exact: true }).selectOption('operator');
    await mapping.getByRole('button', { name: 'Add mapping' }).click();
    await page.getByText('Members of pki-operators get operator at their next sign-in.').waitFor();
    await page.getByRole('cell', { name: 'Corp IdP' }).waitFor();
    await accessible(page, 'data-group-mappings');

    const cert = (await api('GET', '/api/v1/certificates?search=named-1')).data[0];
    await api('POST', '/api/v1/profiles', {
      name: 'EAB profile',
      acme: { enabled: true, path_id: 'eab', eab_required: true },
      enrollment: {
        issuer_id: cert.issuer_id,
        owner_id: cert.owner_id,
        team_id: cert.team_id,
        renewal_policy_id: cert.renewal_policy_id,
      },
    });
    await go('/acme-eab-keys');
    const eab = page.getByRole('form', { name: 'New EAB key' });
    await eab.getByLabel('Name', { exact: true }).fill('ci-runner');
    await choose(eab, 'Profile', 'EAB profile');
    await eab.getByRole('button', { name: 'Create EAB key' }).click();
    const shown = page.getByRole('status').filter({ hasText: 'shown this once' });
    await shown.waitFor();
    const hmac = await field(shown, 'HMAC key (--eab-hmac-key)');
    expect(hmac).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(await field(shown, 'certbot')).toContain(`${running.origin}/acme/profile/eab/directory`);
    await accessible(page, 'data-eab-created');
    expect(JSON.stringify(await api('GET', '/api/v1/acme/eab-keys'))).not.toContain(hmac);
    await page.reload();
    await page.getByRole('cell', { name: 'ci-runner', exact: true }).waitFor();
    expect(await page.content()).not.toContain(hmac);
  });

  it('creates a complete profile — keys, usages, validity and every protocol block — each refusal at its field', async () => {
    await go('/profiles');
    const form = page.getByRole('form', { name: 'New profile' });
    await form.getByLabel('Name', { exact: true }).fill('complete profile');
    await form.getByLabel('Max validity (days)', { exact: true }).fill('4000');
    await form.getByRole('checkbox', { name: 'ACME enabled' }).check();
    await form.getByLabel('Terms of service URL', { exact: true }).fill('not a url');
    await form.getByRole('button', { name: 'Create profile' }).click();
    // Each refusal at its own field: the validity, the URL, the enrollment defaults ACME needs.
    const validity = form.getByLabel('Max validity (days)', { exact: true });
    await expect.poll(() => validity.getAttribute('aria-invalid')).toBe('true');
    expect(await form.getByLabel('Terms of service URL', { exact: true }).getAttribute('aria-invalid')).toBe(
      'true',
    );
    await accessible(page, 'data-profile-form-errors');
    expect((await api('GET', '/api/v1/profiles?search=complete')).total).toBe(0);

    await validity.fill('90');
    await form.getByLabel('Terms of service URL', { exact: true }).fill('https://tos.example.test/terms');
    await form.getByRole('button', { name: 'Create profile' }).click();
    await form.getByText('is required while acme.enabled is true', { exact: false }).first().waitFor();

    await choose(form, 'Issuer', 'UI Local CA');
    await choose(form, 'Owner', 'Nadia Owner');
    await choose(form, 'Team', 'Names Team');
    await choose(form, 'Renewal policy', 'Default');
    await form.getByRole('group', { name: 'RSA key sizes' }).getByRole('checkbox', { name: '3072' }).check();
    await form.getByRole('group', { name: 'ECDSA curves' }).getByRole('checkbox', { name: 'P-384' }).check();
    await form.getByRole('checkbox', { name: 'serverAuth' }).check();
    await form.getByRole('checkbox', { name: /^Must-staple/ }).check();
    await form.getByLabel('ACME path id', { exact: true }).fill('complete');
    await form.getByRole('checkbox', { name: 'External account binding required' }).check();
    await form.getByRole('checkbox', { name: 'tls-alpn-01' }).uncheck();
    await form.getByLabel('New orders per account per hour', { exact: true }).fill('100');
    await form.getByRole('checkbox', { name: 'EST enabled' }).check();
    await form.getByLabel('EST path id', { exact: true }).fill('complete-est');
    await form.getByRole('checkbox', { name: 'Server-side key generation' }).check();
    await form.getByRole('checkbox', { name: /^Require TLS channel binding/ }).check();
    await form.getByLabel('EST username', { exact: true }).fill('device');
    await form.getByLabel('EST password', { exact: true }).fill('est-password-7731');
    await form.getByRole('checkbox', { name: 'SCEP enabled' }).check();
    await form.getByLabel('SCEP path id', { exact: true }).fill('complete-scep');
    await form.getByLabel('Challenge password', { exact: true }).fill('scep-challenge-5521');
    await form.getByRole('button', { name: 'Create profile' }).click();
    await page.getByText('Created complete profile.').waitFor();
    const profile = (await api('GET', '/api/v1/profiles?search=complete%20profile')).data[0];
    expect(profile).toMatchObject({
      max_validity_days: 90,
      key_generation: 'server',
      allowed_key_algorithms: [
        { algorithm: 'RSA', sizes: [3072] },
        { algorithm: 'ECDSA', curves: ['P-384'] },
      ],
      allowed_ekus: ['serverAuth'],
      must_staple: true,
      acme: {
        enabled: true,
        path_id: 'complete',
        eab_required: true,
        challenge_types: ['http-01', 'dns-01'],
        terms_of_service_url: 'https://tos.example.test/terms',
        rate_limits: { orders_per_account_per_hour: 100 },
      },
      est: { enabled: true, path_id: 'complete-est', server_keygen: true, require_channel_binding: true },
      scep: { enabled: true, path_id: 'complete-scep', challenge_password_set: true },
    });
    expect(JSON.stringify(profile)).not.toMatch(/est-password-7731|scep-challenge-5521/);
    expect(await page.content()).not.toMatch(/est-password-7731|scep-challenge-5521/);
    await accessible(page, 'data-profile-created');
  });
});
