import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcmeTestClient, newAccountKey, ORIGIN } from './support/acme-client.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/*
 * The administrators' view of ACME accounts: list and filter them, read one with its order
 * counts, deactivate one with the same effect as the client's own deactivation (RFC 8555
 * §7.3.6), recorded in the audit trail under the administrator's name.
 */

let app: TestApp;
let client: AcmeTestClient;
beforeAll(async () => {
  app = await createTestApp({ handler: { rateLimits: { enrollment: 0 } } });
  client = new AcmeTestClient(app.handler);
}, 180_000);
afterAll(() => app.close());

const A = `${ORIGIN}/acme`;

async function account(contact: string) {
  const key = newAccountKey();
  const answer = await client.post(
    `${A}/new-account`,
    { contact: [contact], termsOfServiceAgreed: true },
    { key },
  );
  expect(answer.status).toBe(201);
  const url = answer.headers.get('location') as string;
  return { key, url, id: url.split('/').pop() as string };
}

describe('ACME accounts (admin REST)', () => {
  it('lists accounts newest first in the list envelope, without the key itself or the client address', async () => {
    const first = await account('mailto:first@example.com');
    const second = await account('mailto:second@example.com');
    const listed = await app.call('GET', '/api/v1/acme/accounts?per_page=2');
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ page: 1, per_page: 2 });
    expect(listed.body.total).toBeGreaterThanOrEqual(2);
    const rows: { id: string; created_at: string }[] = listed.body.data;
    // Two requests may land in the same millisecond: then either order is newest first.
    expect(new Set(rows.map((a) => a.id))).toEqual(new Set([first.id, second.id]));
    expect(Date.parse(rows[0]!.created_at)).toBeGreaterThanOrEqual(Date.parse(rows[1]!.created_at));
    const row = listed.body.data.find((a: { id: string }) => a.id === second.id);
    expect(row).toMatchObject({
      profile_id: 'prof-default',
      status: 'valid',
      contact: ['mailto:second@example.com'],
      terms_agreed: true,
    });
    expect(row.key_thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(row).not.toHaveProperty('jwk');
    expect(row).not.toHaveProperty('created_ip');
  });

  it('filters by status and profile; an unknown status is a 400 naming the parameter', async () => {
    const gone = await account('mailto:gone@example.com');
    expect((await app.call('POST', `/api/v1/acme/accounts/${gone.id}/deactivate`)).status).toBe(200);
    const deactivated = await app.call('GET', '/api/v1/acme/accounts?status=deactivated&per_page=500');
    const ids = deactivated.body.data.map((a: { id: string }) => a.id);
    expect(ids).toContain(gone.id);
    expect(deactivated.body.data.every((a: { status: string }) => a.status === 'deactivated')).toBe(true);
    const valid = await app.call('GET', '/api/v1/acme/accounts?status=valid&per_page=500');
    expect(valid.body.data.map((a: { id: string }) => a.id)).not.toContain(gone.id);
    const elsewhere = await app.call('GET', '/api/v1/acme/accounts?profile_id=prof-none');
    expect(elsewhere.body).toMatchObject({ data: [], total: 0 });
    const bad = await app.call('GET', '/api/v1/acme/accounts?status=sleeping');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('status');
  });

  it('reads one account with how many orders it placed and certificates it was issued; unknown is 404', async () => {
    const { key, url, id } = await account('mailto:orders@example.com');
    const ordered = await client.post(
      `${A}/new-order`,
      { identifiers: [{ type: 'dns', value: 'counted.example.com' }] },
      { key, kid: url },
    );
    expect(ordered.status).toBe(201);
    const read = await app.call('GET', `/api/v1/acme/accounts/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, status: 'valid', orders: 1, certificates: 0 });
    expect((await app.call('GET', '/api/v1/acme/accounts/acct-nosuch')).status).toBe(404);
  });

  it('deactivates an account as its client would: its key is refused and its pending orders end; audited as the admin', async () => {
    const { key, url, id } = await account('mailto:admin-ended@example.com');
    const ordered = await client.post(
      `${A}/new-order`,
      { identifiers: [{ type: 'dns', value: 'ended.example.com' }] },
      { key, kid: url },
    );
    const orderId = (ordered.headers.get('location') as string).split('/').pop() as string;
    // The handler has read and cached the account; the deactivation must still reach it.
    expect((await client.post(url, '', { key, kid: url })).status).toBe(200);

    const done = await app.call('POST', `/api/v1/acme/accounts/${id}/deactivate`);
    expect(done.status).toBe(200);
    expect(done.body.status).toBe('deactivated');
    expect((await client.post(url, '', { key, kid: url })).status).toBe(403);
    expect((await app.storage.acmeOrders.get(orderId))?.status).toBe('invalid');
    // Again: nothing changes, same answer.
    const again = await app.call('POST', `/api/v1/acme/accounts/${id}/deactivate`);
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('deactivated');

    const audit = await app.call('GET', `/api/v1/audit?action=acme_account_deactivated&resource_id=${id}`);
    expect(audit.body.total).toBe(1);
    expect(audit.body.data[0].actor).not.toBe(`acme:${id}`);
    expect(audit.body.data[0].actor_type).not.toBe('anonymous');
    expect((await app.call('POST', '/api/v1/acme/accounts/acct-nosuch/deactivate')).status).toBe(404);
  });

  it('answers 410 when deactivating a revoked account, changing nothing', async () => {
    const { id } = await account('mailto:revoked@example.com');
    await app.storage.acmeAccounts.update(id, { status: 'revoked' });
    const refused = await app.call('POST', `/api/v1/acme/accounts/${id}/deactivate`);
    expect(refused.status).toBe(410);
    expect((await app.storage.acmeAccounts.get(id))?.status).toBe('revoked');
  });
});
