import { ManualClock } from '@certwright/core';
import { createWebhookClient, type Resolver, staticResolver } from '@certwright/core/net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from './support/receiver.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const WEBHOOKS = '/api/notifications/webhooks';
const SECURITY = '/api/system/settings/webhook-security';

/** Test names: every `*.hook.test` is the local receiver; the rest exercise the guard. */
const resolver: Resolver = staticResolver({
  'hook.test': '127.0.0.1',
  'lan.hook.test': '10.20.30.40',
  'public.hook.test': '93.184.215.14',
});

describe('webhooks through the REST API, with real receivers on 127.0.0.1', { timeout: 120_000 }, () => {
  let app: TestApp;
  let clock: ManualClock;
  let receiver: Receiver;
  const url = (path = '/hook') => `http://hook.test:${receiver.port}${path}`;

  beforeAll(async () => {
    clock = new ManualClock('2026-03-01T12:00:00Z');
    receiver = await startReceiver();
    app = await createTestApp({
      clock,
      // The loopback opt-in exists only in code: it lets these tests reach 127.0.0.1 once the
      // allowlist names it. The server never sets it.
      services: {
        webhooks: {
          outbound: (ranges) => createWebhookClient(ranges, { resolve: resolver, loopback: 'when-listed' }),
          timeoutMs: 1500,
          instance: 'https://cw.test',
        },
      },
    });
    expect((await app.call('PUT', SECURITY, { allowed_private_ranges: '127.0.0.1' })).status).toBe(200);
  }, 180_000);
  afterAll(async () => {
    await receiver?.close();
    await app?.close();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.reply = (_, res) => res.end('ok');
  });

  const create = (body: Record<string, unknown>) =>
    app.call('POST', WEBHOOKS, { name: 'hook', url: url(), ...body });

  describe('management', () => {
    it('creates, lists, reads, updates only the fields given and deletes; header values never come back', async () => {
      const made = await create({
        name: 'ops chat',
        headers: [
          { name: 'Authorization', value: 'Bearer s3cret-token' },
          { name: 'X-Api-Key', value: 'key-1' },
        ],
        events: ['ExpirationWarning'],
      });
      expect(made.status).toBe(201);
      expect(made.body).toMatchObject({
        name: 'ops chat',
        method: 'POST',
        service: 'generic',
        enabled: true,
        template: '',
        events: ['ExpirationWarning'],
        headers: [
          { name: 'Authorization', value: '********' },
          { name: 'X-Api-Key', value: '********' },
        ],
      });
      const id = made.body.id as string;
      const list = await app.call('GET', WEBHOOKS);
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.body)).not.toContain('s3cret');
      expect(list.body.data.map((w: { id: string }) => w.id)).toContain(id);

      const renamed = await app.call('PUT', `${WEBHOOKS}/${id}`, { name: 'renamed' });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({
        name: 'renamed',
        url: `http://hook.test:${receiver.port}/********`,
        events: ['ExpirationWarning'],
      });
      expect((await app.storage.webhooks.getWithHeaders(id))?.headers).toEqual({
        Authorization: 'Bearer s3cret-token',
        'X-Api-Key': 'key-1',
      });

      // A masked value keeps the stored one; a new value replaces; a header left out is removed.
      const headers = await app.call('PUT', `${WEBHOOKS}/${id}`, {
        headers: [
          { name: 'Authorization', value: '********' },
          { name: 'X-Team', value: 'pki' },
        ],
      });
      expect(headers.status).toBe(200);
      expect((await app.storage.webhooks.getWithHeaders(id))?.headers).toEqual({
        Authorization: 'Bearer s3cret-token',
        'X-Team': 'pki',
      });
      const maskedUnknown = await app.call('PUT', `${WEBHOOKS}/${id}`, {
        headers: [{ name: 'X-New', value: '********' }],
      });
      expect(maskedUnknown.status).toBe(400);
      expect(maskedUnknown.body.errors[0].field).toBe('headers[0].value');

      // An update is validated like a create, and a refused one changes nothing.
      const privateUrl = await app.call('PUT', `${WEBHOOKS}/${id}`, {
        url: 'http://lan.hook.test/x',
        name: 'no',
      });
      expect(privateUrl.status).toBe(400);
      expect(privateUrl.body.errors[0].field).toBe('url');
      const badTemplate = await app.call('PUT', `${WEBHOOKS}/${id}`, { template: '{{.Nope}}' });
      expect(badTemplate.status).toBe(400);
      expect(badTemplate.body.errors[0].field).toBe('template');
      expect((await app.call('GET', `${WEBHOOKS}/${id}`)).body.name).toBe('renamed');
      expect((await app.call('DELETE', `${WEBHOOKS}/${id}`)).status).toBe(204);
      expect((await app.call('GET', `${WEBHOOKS}/${id}`)).status).toBe(404);
      expect((await app.call('PUT', `${WEBHOOKS}/${id}`, { name: 'x' })).status).toBe(404);
    });

    it('seals the URL, shows it masked and uncached, and keeps the stored URL when the masked form comes back', async () => {
      const token = 'T0AAA/B0BBB/sEcReTtOkEn';
      const made = await create({ name: 'chat', url: url(`/services/${token}?key=q-secret`) });
      expect(made.status).toBe(201);
      const id = made.body.id as string;
      const masked = `http://hook.test:${receiver.port}/********`;
      expect(made.body.url).toBe(masked);
      for (const path of [WEBHOOKS, `${WEBHOOKS}/${id}`]) {
        const read = await app.call('GET', path);
        expect(read.headers.get('cache-control'), path).toBe('no-store');
        expect(JSON.stringify(read.body), path).not.toMatch(/sEcReTtOkEn|q-secret/);
      }
      expect(made.headers.get('cache-control')).toBe('no-store');
      const row = await app.storage.db
        .selectFrom('webhooks')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      expect(JSON.stringify(row)).not.toMatch(/sEcReTtOkEn|q-secret/);
      // A form that sends back what it read changes nothing; the test action uses the stored URL.
      const resent = await app.call('PUT', `${WEBHOOKS}/${id}`, { name: 'chat 2', url: masked });
      expect(resent.status).toBe(200);
      expect(resent.headers.get('cache-control')).toBe('no-store');
      expect((await app.storage.webhooks.getWithHeaders(id))?.url).toBe(
        url(`/services/${token}?key=q-secret`),
      );
      expect((await app.call('POST', `${WEBHOOKS}/test`, { id, url: masked })).body.delivered).toBe(true);
      expect(receiver.received.map((r) => r.url)).toEqual([`/services/${token}?key=q-secret`]);
      await app.call('DELETE', `${WEBHOOKS}/${id}`);
    });

    it('is in the OpenAPI document at 001’s paths and refuses callers without the API key', async () => {
      const doc = app.handler.openapi as { paths: Record<string, Record<string, unknown>> };
      expect(Object.keys(doc.paths[WEBHOOKS] ?? {}).sort()).toEqual(['get', 'post']);
      expect(Object.keys(doc.paths[`${WEBHOOKS}/test`] ?? {})).toEqual(['post']);
      expect(Object.keys(doc.paths[`${WEBHOOKS}/{id}`] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
      expect((await app.call('GET', WEBHOOKS, undefined, { token: null })).status).toBe(401);
      expect((await app.call('GET', WEBHOOKS, undefined, { token: 'wrong-key-0123456789' })).status).toBe(
        401,
      );
    });

    const refusals: [string, Record<string, unknown>, string, RegExp?][] = [
      ['a non-http scheme', { url: 'ftp://hook.test/x' }, 'url', /http/],
      ['userinfo in the URL', { url: 'http://user:pw@hook.test/x' }, 'url', /credentials/],
      ['an unresolvable host', { url: 'http://nowhere.invalid/x' }, 'url', /does not resolve/],
      [
        'a template that does not parse',
        { template: '{\n "a": {{.Level | }}\n}' },
        'template',
        /line 2, column/,
      ],
      ['a template with a missing key', { template: '{"a": {{.Levle | json}}}' }, 'template', /Levle/],
      [
        'a template that loops past the step budget',
        { template: '{{range 100000000}}x{{end}}' },
        'template',
        /steps|output/,
      ],
      [
        'output that is not JSON for a JSON kind',
        { template: '{"text": "{{.Message}}"}' },
        'template',
        /not valid JSON/,
      ],
      ['an oversized template', { template: `{"a": "${'x'.repeat(66_000)}"}` }, 'template', /larger than/],
      [
        'a header name that is not a token',
        { headers: [{ name: 'Bad Header', value: 'v' }] },
        'headers[0].name',
      ],
      [
        'a header value with a newline',
        { headers: [{ name: 'X-A', value: 'a\r\nInjected: 1' }] },
        'headers[0].value',
      ],
      ['a reserved header', { headers: [{ name: 'Host', value: 'evil.test' }] }, 'headers[0].name'],
      ['an action in the URL host', { url: 'http://{{.Node}}.hook.test/x' }, 'url', /scheme and host/],
      ['a query value without urlquery', { url: `http://hook.test/x?m={{.Message}}` }, 'url', /urlquery/],
      ['an unknown service', { service: 'carrier-pigeon' }, 'service'],
      ['an unknown field', { colour: 'red' }, 'colour'],
      [
        'a bot webhook without chat_id',
        { service: 'telegram', url: 'http://hook.test/botT/sendMessage' },
        'url',
        /chat_id/,
      ],
      [
        'a token push webhook without token',
        { service: 'gotify', url: 'http://hook.test/message' },
        'url',
        /token/,
      ],
      ['a topic push webhook without topic', { service: 'ntfy', url: 'http://hook.test/' }, 'url', /topic/],
      ['an events API webhook without routing key', { service: 'pagerduty' }, 'routing_key'],
      [
        'a private target',
        { url: 'http://lan.hook.test/x' },
        'url',
        /resolves to a private IP and private networks are not allowed/,
      ],
    ];
    for (const [what, body, field, message] of refusals) {
      it(`refuses ${what} with a 400 naming ${field}, and stores nothing`, async () => {
        const before = (await app.call('GET', WEBHOOKS)).body.total;
        const res = await create(body);
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.errors.map((f: { field: string }) => f.field)).toContain(field);
        if (message) expect(JSON.stringify(res.body)).toMatch(message);
        expect(JSON.stringify(res.body)).not.toMatch(/\bat .*\.ts:|select |node_modules/);
        expect((await app.call('GET', WEBHOOKS)).body.total).toBe(before);
      });
    }
  });

  describe('the private-range allowlist', () => {
    it('admits an allowlisted private range at once, refuses a setting with one bad entry, and never admits metadata', async () => {
      expect((await create({ url: 'http://lan.hook.test/x' })).status).toBe(400);
      const set = await app.call('PUT', SECURITY, { allowed_private_ranges: ' 10.0.0.0/8 , 127.0.0.1' });
      expect(set.body).toEqual({ allowed_private_ranges: '10.0.0.0/8, 127.0.0.1/32' });
      expect((await app.call('GET', SECURITY)).body).toEqual({
        allowed_private_ranges: '10.0.0.0/8, 127.0.0.1/32',
      });
      const lan = await create({ url: 'http://lan.hook.test/x' });
      expect(lan.status).toBe(201);
      await app.call('DELETE', `${WEBHOOKS}/${lan.body.id}`);

      const bad = await app.call('PUT', SECURITY, { allowed_private_ranges: '10.0.0.0/8, 300.1.1.1' });
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0].field).toBe('allowed_private_ranges');
      expect((await app.call('GET', SECURITY)).body.allowed_private_ranges).toBe('10.0.0.0/8, 127.0.0.1/32');

      await app.call('PUT', SECURITY, { allowed_private_ranges: '0.0.0.0/0, 127.0.0.1' });
      const meta = await create({ url: 'http://169.254.169.254/latest/meta-data' });
      expect(meta.status).toBe(400);
      expect(meta.body.detail).toMatch(/never allowed/);
      await app.call('PUT', SECURITY, { allowed_private_ranges: '127.0.0.1' });
    });
  });

  describe('the test action', () => {
    it('sends a sample alert once and reports the status, an excerpt and the duration', async () => {
      receiver.reply = (_, res) => res.end('{"ok":true}');
      const res = await app.call('POST', `${WEBHOOKS}/test`, {
        name: 'try',
        url: url('/t'),
        service: 'generic',
        template: '{"text": {{printf "[%s] %s" (.Level | upper) .Message | json}}, "days": {{.Value}}}',
        headers: [{ name: 'X-Api-Key', value: 'k' }],
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        delivered: true,
        status_code: 200,
        response_excerpt: '{"ok":true}',
        error: null,
      });
      expect(res.body.duration_ms).toBeGreaterThanOrEqual(0);
      expect(receiver.received).toHaveLength(1);
      const got = receiver.received[0]!;
      // The sample message holds a quote and an emoji: the payload stays JSON.
      expect(JSON.parse(got.body)).toEqual({
        text: '[WARNING] Test alert from certwright: certificate "www.example.com" expires in 14 day(s) 🔐',
        days: 14,
      });
      expect(got.headers['x-api-key']).toBe('k');
      expect(got.headers['idempotency-key']).toBeTruthy();
    });

    it('reports what a refusal means (400: payload, 401/403: credentials) and a stored webhook keeps its masked headers', async () => {
      const made = await create({ headers: [{ name: 'Authorization', value: 'Bearer stored' }] });
      receiver.reply = (_, res) => {
        res.statusCode = 401;
        res.end('bad token');
      };
      const res = await app.call('POST', `${WEBHOOKS}/test`, { id: made.body.id });
      expect(res.body).toMatchObject({ delivered: false, status_code: 401, response_excerpt: 'bad token' });
      expect(res.body.meaning).toMatch(/credentials are wrong or expired/);
      expect(receiver.received.at(-1)!.headers.authorization).toBe('Bearer stored');
      receiver.reply = (_, res2) => {
        res2.statusCode = 400;
        res2.end();
      };
      const bad = await app.call('POST', `${WEBHOOKS}/test`, { id: made.body.id });
      expect(bad.body.meaning).toMatch(/payload format does not suit/);
      await app.call('DELETE', `${WEBHOOKS}/${made.body.id}`);
    });

    it('sends stored secrets only to the stored origin: a new origin needs every value again', async () => {
      // A second receiver: same host name, another port, so another origin (RFC 6454).
      const elsewhere = await startReceiver();
      try {
        const other = `http://hook.test:${elsewhere.port}/collect`;
        const made = await create({
          headers: [
            { name: 'Authorization', value: 'Bearer stored-secret' },
            { name: 'X-Api-Key', value: 'stored-key' },
          ],
        });
        const id = made.body.id as string;
        const moved = await app.call('PUT', `${WEBHOOKS}/${id}`, { url: other });
        expect(moved.status).toBe(400);
        expect(moved.body.errors.map((e: { field: string }) => e.field)).toEqual([
          'headers[0].value',
          'headers[1].value',
        ]);
        const masked = await app.call('PUT', `${WEBHOOKS}/${id}`, {
          url: other,
          headers: [
            { name: 'Authorization', value: '********' },
            { name: 'X-Api-Key', value: 'a new key' },
          ],
        });
        expect(masked.status).toBe(400);
        expect(masked.body.errors.map((e: { field: string }) => e.field)).toEqual(['headers[0].value']);
        const tested = await app.call('POST', `${WEBHOOKS}/test`, { id, url: other });
        expect(tested.status).toBe(400);
        expect(tested.body.errors[0].field).toBe('headers[0].value');
        expect(elsewhere.received).toHaveLength(0);
        expect(receiver.received).toHaveLength(0);
        expect((await app.storage.webhooks.getWithHeaders(id))?.url).toBe(url());

        // Another path on the same origin keeps the stored values.
        expect((await app.call('PUT', `${WEBHOOKS}/${id}`, { url: url('/other-path') })).status).toBe(200);
        // Given again, the values move with the URL.
        const given = await app.call('PUT', `${WEBHOOKS}/${id}`, {
          url: other,
          headers: [
            { name: 'Authorization', value: 'Bearer for-the-new-host' },
            { name: 'X-Api-Key', value: 'new-key' },
          ],
        });
        expect(given.status).toBe(200);
        expect((await app.call('POST', `${WEBHOOKS}/test`, { id })).body.delivered).toBe(true);
        expect(elsewhere.received.map((r) => r.headers.authorization)).toEqual(['Bearer for-the-new-host']);
        expect(JSON.stringify(elsewhere.received)).not.toContain('stored-secret');
        await app.call('DELETE', `${WEBHOOKS}/${id}`);
      } finally {
        await elsewhere.close();
      }
    });

    it('validates like a create: a template error is a 400 with line and column, nothing is sent', async () => {
      const res = await app.call('POST', `${WEBHOOKS}/test`, { url: url(), template: '{{if .Level}}' });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe('template');
      expect(res.body.detail).toMatch(/line 1, column/);
      expect(receiver.received).toHaveLength(0);
    });
  });

  describe('live alerts through the notification pipeline', () => {
    const raise = (type: 'ExpirationWarning' | 'Revocation' = 'ExpirationWarning') =>
      app.storage.transaction((tx) =>
        app.services.notifications.raiseForOwner(
          tx,
          { owner_id: 'own-nobody', certificate_id: null },
          type,
          'Certificate www "quoted" expires in 5 day(s)',
          ['Certificate www expires.', 'Alert threshold: 7 day(s).'],
        ),
      );
    const eventsOf = async (id: string) => (await app.call('GET', `${WEBHOOKS}/${id}/deliveries`)).body.data;

    it('delivers an expiry alert, with the idempotency key of its event, and shows it in the history', async () => {
      const hook = await create({ name: 'live', events: ['ExpirationWarning'] });
      const other = await create({ name: 'revocations only', events: ['Revocation'] });
      await raise();
      await app.services.notifications.sweep();
      expect(receiver.received).toHaveLength(1);
      const body = JSON.parse(receiver.received[0]!.body);
      expect(body).toMatchObject({
        level: 'critical',
        type: 'ExpirationWarning',
        message: 'Certificate www "quoted" expires in 5 day(s)',
        threshold: 7,
        instance: 'https://cw.test',
      });
      const [event] = await eventsOf(hook.body.id);
      expect(event).toMatchObject({
        status: 'sent',
        channel: `webhook:${hook.body.id}`,
        type: 'ExpirationWarning',
      });
      expect(receiver.received[0]!.headers['idempotency-key']).toBe(event.id);
      expect(await eventsOf(other.body.id)).toEqual([]);
      await app.call('DELETE', `${WEBHOOKS}/${hook.body.id}`);
      await app.call('DELETE', `${WEBHOOKS}/${other.body.id}`);
    });

    it('delivers an operator’s endpoint-health notification addressed to one webhook', async () => {
      const hook = await create({ name: 'health', service: 'slack' });
      const made = await app.call('POST', '/api/v1/notifications', {
        type: 'EndpointHealth',
        channel: `webhook:${hook.body.id}`,
        recipient: 'ops',
        subject: 'Endpoint api.example.com:443 serves an expired certificate',
        message: 'TLS probe failed',
      });
      expect(made.status).toBe(201);
      await app.services.notifications.sweep();
      expect(receiver.received).toHaveLength(1);
      const body = JSON.parse(receiver.received[0]!.body);
      expect(body.text).toBe(
        '🚨 [CRITICAL] EndpointHealth\nEndpoint api.example.com:443 serves an expired certificate',
      );
      expect((await app.call('GET', `/api/v1/notifications/${made.body.id}`)).body.status).toBe('sent');
      await app.call('DELETE', `${WEBHOOKS}/${hook.body.id}`);
    });

    it('retries a 503 after the Retry-After it asked for, with the same idempotency key, then delivers', async () => {
      const hook = await create({ name: 'flaky' });
      receiver.reply = (_, res) => {
        res.statusCode = 503;
        res.setHeader('retry-after', '900');
        res.end('busy');
      };
      await raise();
      await app.services.notifications.sweep();
      let [event] = await eventsOf(hook.body.id);
      expect(event).toMatchObject({ status: 'failed', retry_count: 1 });
      expect(event.last_error).toMatch(/HTTP 503/);
      expect(new Date(event.next_retry_at).getTime() - clock.now().getTime()).toBe(900_000);
      // Not yet due at the schedule's two minutes: the target asked for fifteen.
      clock.advance(5 * 60_000);
      await app.services.notifications.sweep();
      expect(receiver.received).toHaveLength(1);
      receiver.reply = (_, res) => res.end('ok');
      clock.advance(11 * 60_000);
      await app.services.notifications.sweep();
      [event] = await eventsOf(hook.body.id);
      expect(event.status).toBe('sent');
      expect(receiver.received).toHaveLength(2);
      expect(receiver.received[1]!.headers['idempotency-key']).toBe(
        receiver.received[0]!.headers['idempotency-key'],
      );
      await app.call('DELETE', `${WEBHOOKS}/${hook.body.id}`);
    });

    it('does not retry a 4xx: the event goes dead at once with what the status means', async () => {
      const hook = await create({ name: 'rejects' });
      receiver.reply = (_, res) => {
        res.statusCode = 403;
        res.end();
      };
      await raise();
      await app.services.notifications.sweep();
      const [event] = await eventsOf(hook.body.id);
      expect(event.status).toBe('dead');
      expect(event.last_error).toMatch(/HTTP 403.*credentials/);
      await app.call('DELETE', `${WEBHOOKS}/${hook.body.id}`);
    });

    it('loses nothing when a receiver is down past the retry budget: dead, visible, then redelivered with the same key', async () => {
      const down = await startReceiver();
      const port = down.port;
      await down.close();
      const hook = await create({ name: 'down for an hour' });
      await app.storage.webhooks.update(hook.body.id, { url: `http://hook.test:${port}/gone` });
      await raise();
      // Five attempts over 2 + 4 + 8 + 16 minutes, then dead (the notification retry budget).
      await app.services.notifications.sweep();
      for (const minutes of [2, 4, 8, 16]) {
        clock.advance(minutes * 60_000 + 1000);
        await app.services.notifications.sweep();
      }
      let [event] = await eventsOf(hook.body.id);
      expect(event).toMatchObject({ status: 'dead', retry_count: 4 });
      expect(event.last_error).toMatch(/could not be reached/);
      // An hour later the receiver is back; one call requeues every dead delivery.
      clock.advance(30 * 60_000);
      await app.storage.webhooks.update(hook.body.id, { url: url('/back') });
      const redelivered = await app.call('POST', `${WEBHOOKS}/${hook.body.id}/redeliver`);
      expect(redelivered.body).toEqual({ requeued: 1, remaining: 0 });
      await app.services.notifications.sweep();
      [event] = await eventsOf(hook.body.id);
      expect(event.status).toBe('sent');
      expect(receiver.received.map((r) => r.headers['idempotency-key'])).toEqual([event.id]);
      expect((await app.call('POST', `${WEBHOOKS}/wh-nope/redeliver`)).status).toBe(404);
      await app.call('DELETE', `${WEBHOOKS}/${hook.body.id}`);
    });

    it('survives a receiver that is down: failed and retried until it is back, nothing lost', async () => {
      const down = await startReceiver();
      const port = down.port;
      await down.close();
      const hook = await create({ name: 'down' });
      // Point the stored webhook at the closed port (create checked the address, not the port).
      await app.storage.webhooks.update(hook.body.id, { url: `http://hook.test:${port}/gone` });
      await raise();
      await app.services.notifications.sweep();
      let [event] = await eventsOf(hook.body.id);
      expect(event.status).toBe('failed');
      await app.storage.webhooks.update(hook.body.id, { url: url('/back') });
      clock.advance(3 * 60_000);
      await app.services.notifications.sweep();
      [event] = await eventsOf(hook.body.id);
      expect(event.status).toBe('sent');
      expect(receiver.received.map((r) => r.url)).toEqual(['/back']);
      await app.call('DELETE', `${WEBHOOKS}/${hook.body.id}`);
    });

    it('honours the enabled flag at delivery time and cuts a receiver that hangs at the timeout', async () => {
      const hook = await create({ name: 'toggled' });
      await raise();
      await app.call('PUT', `${WEBHOOKS}/${hook.body.id}`, { enabled: false });
      await app.services.notifications.sweep();
      let [event] = await eventsOf(hook.body.id);
      expect(event).toMatchObject({ status: 'undeliverable', sent_at: null });
      expect(event.last_error).toMatch(/disabled; not delivered/);
      expect(receiver.received).toHaveLength(0);

      await app.call('PUT', `${WEBHOOKS}/${hook.body.id}`, { enabled: true });
      receiver.reply = () => {}; // never answers
      clock.advance(1000); // the newest event comes first in the history
      await raise();
      await app.services.notifications.sweep();
      [event] = await eventsOf(hook.body.id);
      expect(event.status).toBe('failed');
      expect(event.last_error).toMatch(/time/i);
      await app.call('DELETE', `${WEBHOOKS}/${hook.body.id}`);
    });

    it('re-checks the destination before each delivery: a private range removed from the allowlist stops it', async () => {
      const hook = await create({ name: 'rechecked' });
      await app.call('PUT', SECURITY, { allowed_private_ranges: '' });
      await raise();
      await app.services.notifications.sweep();
      const [event] = await eventsOf(hook.body.id);
      expect(event.status).toBe('dead');
      expect(event.last_error).toMatch(/loopback address, which is never allowed/);
      expect(receiver.received).toHaveLength(0);
      await app.call('PUT', SECURITY, { allowed_private_ranges: '127.0.0.1' });
      await app.call('DELETE', `${WEBHOOKS}/${hook.body.id}`);
    });
  });
});

describe('webhooks without the loopback opt-in (the server’s configuration)', { timeout: 120_000 }, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp({
      services: { webhooks: { outbound: (ranges) => createWebhookClient(ranges, { resolve: resolver }) } },
    });
  }, 180_000);
  afterAll(() => app?.close());

  it('refuses a loopback allowlist entry, naming the setting', async () => {
    const res = await app.call('PUT', SECURITY, { allowed_private_ranges: '10.0.0.0/8, 127.0.0.1' });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('allowed_private_ranges');
    expect(res.body.detail).toMatch(/loopback/);
  });
});
