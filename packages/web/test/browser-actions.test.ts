import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { staticResolver } from '@certwright/core/net';
import {
  certificateToPem,
  createSelfSignedCertificate,
  exportPkcs8Pem,
  generateKeyPair,
} from '@certwright/core/pki';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestPki } from '../../server/test/support/openssl-pki.js';
import { CHROMIUM, haveChromium, launchChromium } from './support/chromium.js';
import { accessible, type ConsoleServer, signInWithKey, startConsoleServer } from './support/console.js';

const SECRET = 'web-actions-test-secret-0123456789abcdef';
const DAY = 86_400_000;

if (!haveChromium)
  console.warn(`skipping the browser action test: ${CHROMIUM} is missing (apt-get install chromium)`);

/** A TLS server on a loopback port presenting a fresh self-signed certificate for `cn`. */
async function tlsEndpoint(cn: string): Promise<tls.Server> {
  const keys = await generateKeyPair('ECDSA-P256');
  const now = Date.now();
  const cert = createSelfSignedCertificate(
    {
      subject: `CN=${cn}`,
      notBefore: new Date(now - DAY),
      notAfter: new Date(now + 60 * DAY),
      subjectAltNames: [{ type: 'dns', value: cn }],
    },
    keys.privateKey,
  );
  const server = tls.createServer(
    { cert: certificateToPem(cert.der), key: exportPkcs8Pem(keys.privateKey) },
    (socket) => socket.end(),
  );
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const portOf = (server: { address(): AddressInfo | string | null }) => (server.address() as AddressInfo).port;

/**
 * The console's actions that change state, each checked twice: what the operator sees on the page
 * and what the server holds afterwards (read back through the API). One server, one browser, one
 * signed-in page, steps in order: scan now, discovery claim and dismiss, scan-target edit and
 * delete, agent retirement (refused with dependents, force only with a reason), bulk revoke over
 * two request chunks, and requeue of a dead notification.
 */
describe.skipIf(!haveChromium)('console actions in Chromium change the server’s state', () => {
  const pki = makeTestPki(['server']);
  let running: ConsoleServer;
  let browser: Browser;
  let page: Page;
  let claimed: tls.Server;
  let dismissed: tls.Server;
  let receiver: http.Server;
  /** The receiver's answer to webhook deliveries: 410 (permanent, dead at once) until switched. */
  let receiverStatus = 410;
  const deliveries: string[] = [];

  const api = (method: string, path: string, body?: unknown) => running.api(method, path, body);
  const go = (path: string) => page.goto(`${running.origin}${path}`);

  beforeAll(async () => {
    claimed = await tlsEndpoint('claim-me.discovery.test');
    dismissed = await tlsEndpoint('dismiss-me.discovery.test');
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        deliveries.push(req.url ?? '');
        res.statusCode = receiverStatus;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    running = await startConsoleServer(
      pki,
      SECRET,
      {
        discovery: { allowLoopback: true, tickMs: 500, timeoutMs: 1500 },
        webhooks: { loopback: 'when-listed', resolve: staticResolver({ 'receiver.test': '127.0.0.1' }) },
      },
      // The delivery pass that sends queued notifications runs every second.
      { SVC_NOTIFICATION_RETRY_INTERVAL: '1s' },
    );
    browser = await launchChromium(readFileSync(pki.issued.server!.cert));
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await signInWithKey(page, running.origin, SECRET);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await running?.server.close();
    for (const s of [claimed, dismissed, receiver]) {
      if (!s) continue;
      if (s instanceof http.Server) s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });

  it('scan now, claim and dismiss the findings, edit and delete the scan target', async () => {
    const target = await api('POST', '/api/v1/network-scan/targets', {
      name: 'Loopback lab',
      cidrs: ['127.0.0.1/32'],
      ports: [portOf(claimed), portOf(dismissed)],
    });

    // Scan now: the page says it started; the server ran it and found both certificates.
    await go('/discovery/targets');
    await page.getByRole('button', { name: 'Scan Loopback lab now' }).click();
    await page.getByText(/^Scan of Loopback lab started/).waitFor();
    await expect
      .poll(async () => (await api('GET', `/api/v1/network-scan/targets/${target.id}`)).last_scan_at, {
        timeout: 60_000,
      })
      .not.toBeNull();
    const scans = await api('GET', '/api/v1/discovery/scans');
    const scan = scans.data.find((s: { target_id?: string }) => s.target_id === target.id) ?? scans.data[0];
    await expect
      .poll(async () => (await api('GET', `/api/v1/discovery/scans/${scan.id}`)).status, { timeout: 60_000 })
      .toBe('completed');
    expect((await api('GET', `/api/v1/discovery/scans/${scan.id}`)).certificates_found).toBe(2);

    // Claim: refused until issuer, owner and team are chosen; then managed, with a certificate.
    const issuer = await api('POST', '/api/v1/issuers', { name: 'Claims CA', type: 'Local' });
    await api('POST', '/api/v1/owners', { name: 'Claims Owner', email: 'claims@example.test' });
    await api('POST', '/api/v1/teams', { name: 'Claims Team' });
    await go('/discovery');
    const claimRow = page.getByRole('row').filter({ hasText: 'claim-me.discovery.test' });
    await claimRow.getByRole('button', { name: 'Claim' }).click();
    const dialog = page.getByRole('dialog', { name: /^Claim .*claim-me\.discovery\.test/ });
    await dialog.getByRole('button', { name: 'Claim certificate' }).click();
    await dialog.getByText('choose issuer, owner, team before claiming').waitFor();
    await dialog.getByLabel('Issuer', { exact: true }).selectOption({ label: 'Claims CA' });
    await dialog.getByLabel('Owner', { exact: true }).selectOption({ label: 'Claims Owner' });
    await dialog.getByLabel('Team', { exact: true }).selectOption({ label: 'Claims Team' });
    await dialog.getByLabel('Name', { exact: true }).fill('claimed-endpoint');
    await accessible(page, 'discovery-claim');
    await dialog.getByRole('button', { name: 'Claim certificate' }).click();
    await page.getByText(/^Claimed .*claim-me\.discovery\.test.*; it is now managed\.$/).waitFor();
    await claimRow.waitFor({ state: 'detached' });
    const found = async (cn: string) =>
      (await api('GET', '/api/v1/discovery/certificates?per_page=100')).data.find((f: { subject: string }) =>
        f.subject.includes(cn),
      );
    expect((await found('claim-me.discovery.test')).status).toBe('managed');
    const managed = (await api('GET', '/api/v1/certificates?search=claimed-endpoint')).data;
    expect(managed.map((c: { name: string; issuer_id: string }) => [c.name, c.issuer_id])).toEqual([
      ['claimed-endpoint', issuer.id],
    ]);

    // Dismiss: the row leaves the unmanaged list and the server holds it dismissed.
    const dismissRow = page.getByRole('row').filter({ hasText: 'dismiss-me.discovery.test' });
    await dismissRow.getByRole('button', { name: 'Dismiss' }).click();
    await page.getByText(/^Dismissed .*dismiss-me\.discovery\.test/).waitFor();
    await dismissRow.waitFor({ state: 'detached' });
    expect((await found('dismiss-me.discovery.test')).status).toBe('dismissed');
    await page.getByLabel('Status').selectOption('dismissed');
    await page.getByRole('row').filter({ hasText: 'dismiss-me.discovery.test' }).waitFor();

    // Edit: the form loads the target; the saved schedule is listed and stored.
    await go('/discovery/targets');
    await page.getByRole('button', { name: 'Edit Loopback lab' }).click();
    await page.getByRole('heading', { name: 'Edit scan target Loopback lab' }).waitFor();
    const form = page.locator('form');
    expect(await form.getByLabel('Ports', { exact: true }).inputValue()).toBe(
      `${portOf(claimed)}, ${portOf(dismissed)}`,
    );
    await form.getByLabel('Interval (seconds)', { exact: true }).fill('60');
    await form.getByRole('button', { name: 'Save scan target' }).click();
    // Below the 300 s minimum: the server's refusal is shown and nothing changes.
    await page.getByRole('alert').getByText('interval_seconds must be 0 or at least 300').waitFor();
    expect((await api('GET', `/api/v1/network-scan/targets/${target.id}`)).interval_seconds).toBe(0);
    await form.getByLabel('Interval (seconds)', { exact: true }).fill('3600');
    await form.getByLabel('Ports', { exact: true }).fill(String(portOf(claimed)));
    await form.getByRole('button', { name: 'Save scan target' }).click();
    await page.getByText('Saved Loopback lab.').waitFor();
    await page.getByRole('cell', { name: 'every 3600 s', exact: true }).waitFor();
    const edited = await api('GET', `/api/v1/network-scan/targets/${target.id}`);
    expect([edited.interval_seconds, edited.ports]).toEqual([3600, [portOf(claimed)]]);
    await accessible(page, 'discovery-targets-edited');

    // Delete, through the confirmation naming the target; its findings stay.
    await page.getByRole('button', { name: 'Delete Loopback lab' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete scan target Loopback lab?' });
    await confirm.getByRole('button', { name: 'Delete Loopback lab' }).click();
    await page.getByText('Deleted Loopback lab; its scans and findings stay.').waitFor();
    await page.getByText('No scan targets yet.').waitFor();
    await expect(api('GET', `/api/v1/network-scan/targets/${target.id}`)).rejects.toThrow(/→ 404/);
    expect((await found('claim-me.discovery.test')).status).toBe('managed');
  });

  it('retires an agent: refused with its dependents named, force held back until a reason is given', async () => {
    const agent = await api('POST', '/api/v1/agents', { name: 'edge-07', hostname: 'edge-07.example.test' });
    await api('POST', '/api/v1/targets', { agent_id: agent.id, name: 'edge nginx', type: 'NGINX' });

    await go('/agents');
    await page.getByRole('button', { name: 'Retire edge-07' }).click();
    const dialog = page.getByRole('dialog', { name: 'Retire agent edge-07?' });
    await dialog.getByRole('button', { name: 'Retire edge-07' }).click();
    await dialog
      .getByText(/^1 active targets, 0 active certificates and 0 pending jobs still depend on it/)
      .waitFor();
    expect((await api('GET', `/api/v1/agents/${agent.id}`)).retired_at).toBeNull();

    // Force without a reason: the dialog refuses (the button is disabled and says why).
    await dialog.getByLabel(/Force, even with dependents/).check();
    const force = dialog.getByRole('button', { name: 'Force retire edge-07' });
    expect(await force.isDisabled()).toBe(true);
    await dialog.getByText('A forced retirement needs a reason.').waitFor();
    await dialog.getByLabel('Reason', { exact: true }).fill('   ');
    expect(await force.isDisabled()).toBe(true);
    await accessible(page, 'agents-retire-force');
    await dialog.getByLabel('Reason', { exact: true }).fill('host decommissioned');
    await force.click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Retire edge-07' }).waitFor({ state: 'detached' });
    expect((await api('GET', `/api/v1/agents/${agent.id}`)).retired_at).not.toBeNull();
    const audit = await api('GET', `/api/v1/audit?resource_id=${agent.id}`);
    expect(JSON.stringify(audit.data)).toContain('host decommissioned');
  });

  it('bulk-revokes 21 selected certificates in two chunks with the count, the names and the progress', async () => {
    const issuer = await api('POST', '/api/v1/issuers', { name: 'Bulk CA', type: 'Local' });
    const ids: string[] = [];
    for (let i = 1; i <= 21; i++) {
      const name = `bulk-rv-${String(i).padStart(2, '0')}`;
      const cert = await api('POST', '/api/v1/certificates', {
        name,
        common_name: `${name}.example.test`,
        sans: [`${name}.example.test`],
        issuer_id: issuer.id,
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
        profile_id: 'prof-default',
      });
      ids.push(cert.id);
    }
    // Issued first, so that no issuance is still running when the revocation arrives.
    const statuses = async () =>
      (await api('GET', '/api/v1/certificates?search=bulk-rv-&per_page=50')).data.map(
        (c: { status: string }) => c.status,
      );
    await expect.poll(statuses, { timeout: 120_000 }).toEqual(Array(21).fill('Active'));

    await go('/certificates?search=bulk-rv-');
    for (let i = 1; i <= 21; i++)
      await page.getByRole('checkbox', { name: `Select bulk-rv-${String(i).padStart(2, '0')}` }).check();
    await page.getByText('21 selected').waitFor();
    await page.getByRole('button', { name: 'Revoke selected' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke 21 certificates?' });
    await dialog.getByText(/^bulk-rv-\d\d(, bulk-rv-\d\d){9} and 11 more$/).waitFor();
    await dialog.getByLabel('Reason', { exact: true }).selectOption('superseded');
    await accessible(page, 'certificates-bulk-revoke');
    await dialog.getByRole('button', { name: 'Revoke 21' }).click();
    await dialog.getByText('21 of 21 sent: 21 revoked, 0 skipped, 0 failed.').waitFor();
    expect(await dialog.locator('progress').evaluate((p: HTMLProgressElement) => [p.value, p.max])).toEqual([
      21, 21,
    ]);
    await dialog.getByRole('button', { name: 'Close' }).last().click();
    await page.getByText('0 selected').waitFor();

    await expect.poll(statuses).toEqual(Array(21).fill('Revoked'));
    // The version the last chunk carried is revoked with the reason chosen in the dialog.
    const [version] = (await api('GET', `/api/v1/certificates/${ids[20]}/versions`)).data;
    expect([version.revocation_reason, version.revoked_at === null]).toEqual(['superseded', false]);
  });

  it('requeues a dead notification: it leaves the dead list and is delivered', async () => {
    await api('PUT', '/api/system/settings/webhook-security', { allowed_private_ranges: '127.0.0.1' });
    const hook = await api('POST', '/api/notifications/webhooks', {
      name: 'flaky receiver',
      url: `http://receiver.test:${portOf(receiver)}/alerts`,
      service: 'generic',
    });
    const event = await api('POST', '/api/v1/notifications', {
      type: 'RenewalFailure',
      channel: `webhook:${hook.id}`,
      recipient: 'ops',
      subject: 'renewal of shop failed',
      message: 'the CA refused the request',
    });
    // The receiver answers 410: a permanent failure, dead at the first attempt.
    await expect
      .poll(async () => (await api('GET', `/api/v1/notifications/${event.id}`)).status, { timeout: 60_000 })
      .toBe('dead');

    await go('/notifications');
    await page.getByLabel('Status').selectOption('dead');
    const row = page.getByRole('row').filter({ hasText: 'renewal of shop failed' });
    await row.getByRole('cell', { name: 'dead', exact: true }).waitFor();
    await accessible(page, 'notifications-dead');
    receiverStatus = 200;
    const before = deliveries.length;
    await row.getByRole('button', { name: 'Requeue renewal of shop failed' }).click();
    await row.waitFor({ state: 'detached' });
    await expect
      .poll(async () => (await api('GET', `/api/v1/notifications/${event.id}`)).status, { timeout: 60_000 })
      .toBe('sent');
    expect(deliveries.length).toBeGreaterThan(before);
    await page.getByLabel('Status').selectOption('sent');
    await page.getByRole('row').filter({ hasText: 'renewal of shop failed' }).waitFor();
  });
});
