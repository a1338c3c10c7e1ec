import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificate, type References, seedReferences } from './support/inventory-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

// The test app's clock stands at 2026-01-01T00:00:00Z.
const DAY = 86_400_000;
const NOW = Date.parse('2026-01-01T00:00:00Z');

let app: TestApp;
let refs: References;

beforeAll(async () => {
  app = await createTestApp();
  refs = await seedReferences(app);
});
afterAll(() => app.close());

/** An Active certificate whose latest version expires `days` days from the clock's now. */
async function activeExpiringIn(days: number, overrides: Record<string, unknown> = {}) {
  const cert = await createCertificate(app, refs, overrides);
  const serial = Math.floor(Math.random() * 2 ** 48)
    .toString(16)
    .padStart(12, '0');
  await app.storage.versions.create({
    certificate_id: cert.id,
    issuer_id: refs.issuer,
    serial_number: serial,
    fingerprint_sha256: serial.padStart(64, '0'),
    key_algorithm: 'ECDSA',
    key_size: 256,
    subject: 'CN=www.example.com',
    issued_at: new Date(NOW - DAY),
    not_before: new Date(NOW - DAY),
    not_after: new Date(NOW + days * DAY),
    csr_pem: '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n',
    cert_pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    chain_pem: '',
  });
  await app.storage.certificates.update(cert.id, { status: 'Active' });
  return cert;
}

const listTotal = async (query: string): Promise<number> => {
  const res = await app.call('GET', `/api/v1/certificates?per_page=1&${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.total;
};

describe('GET /api/v1/dashboard/overview', () => {
  it('counts what the lists it links to show: weekly expiry bins, issuers, teams, renewals', async () => {
    const team2 = await app.call('POST', '/api/v1/teams', { name: 'dashboard-team-two' });
    expect(team2.status).toBe(201);
    // 3 days (week 0), 10 days (week 1, twice), 40 days (week 5), 200 days (beyond the timeline).
    await activeExpiringIn(3);
    await activeExpiringIn(10, { team_id: team2.body.id });
    await activeExpiringIn(12, { team_id: team2.body.id });
    await activeExpiringIn(40);
    await activeExpiringIn(200);
    await createCertificate(app, refs); // Pending, no version: in no bin
    // Renewal jobs: 3 completed and 1 failed this week, 1 failed long ago.
    const jobs = await app.storage.jobs.createMany(
      Array.from({ length: 5 }, () => ({ type: 'Renewal' as const })),
    );
    const finish = (i: number, status: 'Completed' | 'Failed', at: number) =>
      app.storage.jobs.update(jobs[i]!.id, { status, completed_at: new Date(at) });
    await finish(0, 'Completed', NOW - DAY);
    await finish(1, 'Completed', NOW - 2 * DAY);
    await finish(2, 'Completed', NOW - 6 * DAY);
    await finish(3, 'Failed', NOW - 3 * DAY);
    await finish(4, 'Failed', NOW - 30 * DAY);

    const res = await app.call('GET', '/api/v1/dashboard/overview');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const o = res.body;
    expect(o.as_of).toBe('2026-01-01T00:00:00.000Z');
    expect(o.expiry_timeline).toHaveLength(13);
    expect(o.expiry_timeline.map((b: { total: number }) => b.total)).toEqual([
      1, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
    ]);
    // Each bin's count is the total of the certificate list filtered the same way.
    for (const bin of o.expiry_timeline) {
      expect(bin.ends_at).toBe(new Date(Date.parse(bin.starts_at) + 7 * DAY).toISOString());
      expect(
        await listTotal(
          `status=Active,Expiring,RenewalInProgress,Failed&expires_after=${bin.starts_at}&expires_before=${bin.ends_at}`,
        ),
      ).toBe(bin.total);
    }

    const byTeam = new Map(o.by_team.map((t: { id: string; total: number }) => [t.id, t.total]));
    expect(byTeam.get(team2.body.id)).toBe(2);
    expect(byTeam.get(refs.team)).toBe(4);
    expect(o.by_team[0].id).toBe(refs.team); // largest first
    for (const team of o.by_team) expect(await listTotal(`team_id=${team.id}`)).toBe(team.total);
    for (const issuer of o.by_issuer) expect(await listTotal(`issuer_id=${issuer.id}`)).toBe(issuer.total);
    expect(o.by_issuer.find((i: { id: string }) => i.id === refs.issuer)).toMatchObject({ total: 6 });
    expect([o.issuers_more, o.teams_more]).toEqual([0, 0]);

    expect(o.renewals).toEqual({
      due_this_week: { total: 1, estimated: false },
      completed_last_7_days: 3,
      failed_last_7_days: 1,
      success_rate: 0.75,
    });
    const since = new Date(NOW - 7 * DAY).toISOString();
    const failed = await app.call('GET', `/api/v1/jobs?type=Renewal&status=Failed&completed_after=${since}`);
    expect(failed.body.total).toBe(1);
  });

  it('refuses a malformed completed_after on the job list, naming it', async () => {
    const res = await app.call('GET', '/api/v1/jobs?completed_after=yesterday');
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('completed_after');
  });
});

describe('GET /api/v1/certificates?serial=', () => {
  it('finds a certificate by a serial as openssl prints it, colons, case and padding aside', async () => {
    const cert = await activeExpiringIn(30);
    const serial = await currentSerial(cert.id);
    const colons = serial
      .toUpperCase()
      .match(/.{1,2}/g)!
      .join(':');
    for (const spelling of [serial, colons, `00${serial}`]) {
      const res = await app.call('GET', `/api/v1/certificates?serial=${encodeURIComponent(spelling)}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([cert.id]);
    }
    const bad = await app.call('GET', '/api/v1/certificates?serial=not-a-serial');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body.errors)).toContain('serial');
  });
});

async function currentSerial(certificateId: string): Promise<string> {
  const res = await app.call('GET', `/api/v1/certificates/${certificateId}/versions`);
  return res.body.data[0].serial_number;
}
