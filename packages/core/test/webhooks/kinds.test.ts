import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_SERVICES, type WebhookService } from '../../src/domain/webhook.js';
import { isCertwrightError } from '../../src/errors.js';
import type { AlertTemplateData } from '../../src/notify/template/alert.js';
import { alertFromEvent, goDuration, sampleAlert } from '../../src/notify/webhooks/alert.js';
import { prepareWebhookRequest, type WebhookTarget } from '../../src/notify/webhooks/request.js';

const NOW = new Date('2026-05-01T12:00:00Z');

/** Values that break naive string-built payloads and markup. */
const hostile: AlertTemplateData = {
  ...sampleAlert(NOW),
  ResourceName: 'www."quoted".example <b>&</b> *bold* _it_ [x](y)',
  Message: 'line one\nline "two" \\ back\u2028sep 🔐 </script> {{.Level}}',
  Level: 'critical',
};

const URLS: Record<WebhookService, string> = {
  generic: 'https://hooks.example.com/alert',
  slack: 'https://hooks.slack.test/services/T000/B000/XXXX',
  discord: 'https://discord.test/api/webhooks/123/tok',
  telegram: 'https://api.telegram.test/bot123:ABC/sendMessage?chat_id=-100200',
  gotify: 'https://push.example.com/message?token=AppTok',
  ntfy: 'https://ntfy.example.com/certs',
  teams: 'https://outlook.office.test/webhook/abc',
  pagerduty: 'https://events.pagerduty.test/v2/enqueue',
};

const target = (service: WebhookService, extra: Partial<WebhookTarget> = {}): WebhookTarget => ({
  url: URLS[service],
  method: 'POST',
  service,
  template: '',
  headers: service === 'pagerduty' ? { routing_key: 'R0UTINGKEY' } : {},
  options: {},
  ...extra,
});

const header = (headers: [string, string][], name: string) =>
  headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];

describe('built-in payloads of every kind', () => {
  it('carry the fields each receiving service documents as required', () => {
    const body = (s: WebhookService) => JSON.parse(prepareWebhookRequest(target(s), hostile, 'k').body!);
    // Incoming webhook of a team chat: `text` is required (with attachments as the rich part).
    expect(body('slack').text).toContain(hostile.Message);
    // Chat webhooks: `content` or `embeds`; an embed's title ≤ 256, description ≤ 4096.
    const discord = body('discord');
    expect(discord.content.length).toBeLessThanOrEqual(2000);
    expect(discord.embeds[0].description).toBe(hostile.Message);
    // Bot API sendMessage: chat_id and text; HTML parse mode with the values escaped.
    const telegram = body('telegram');
    expect(telegram).toMatchObject({ chat_id: '-100200', parse_mode: 'HTML' });
    expect(telegram.text).toContain('🚨');
    expect(telegram.text).toContain('&lt;b&gt;&amp;&lt;/b&gt;');
    expect(telegram.text).not.toContain('<b>&</b>');
    // Token push server: `message` required; markdown display with the values escaped.
    const gotify = body('gotify');
    expect(gotify.extras['client::display'].contentType).toBe('text/markdown');
    expect(gotify.message).toContain('\\*bold\\*');
    expect(gotify.priority).toBe(8);
    // Collaboration-suite connector card: @type, @context and summary (or text).
    expect(body('teams')).toMatchObject({
      '@type': 'MessageCard',
      '@context': 'https://schema.org/extensions',
    });
    expect(body('teams').summary).toBeTruthy();
    // Events API v2: routing_key, event_action, payload.summary, payload.source, payload.severity.
    const pd = body('pagerduty');
    expect(pd).toMatchObject({ routing_key: 'R0UTINGKEY', event_action: 'trigger' });
    expect(pd.dedup_key).toBe('certwright/mc-test/ExpirationWarning');
    expect(pd.payload.summary.length).toBeLessThanOrEqual(1024);
    expect(pd.payload.source).toBeTruthy();
    expect(['critical', 'error', 'warning', 'info']).toContain(pd.payload.severity);
    // The generic body names all 13 variables.
    expect(Object.keys(body('generic'))).toHaveLength(13);
  });

  it('sends the routing key as a header named routing_key, and the topic push kind priority and emoji tags by level', () => {
    const pd = prepareWebhookRequest(target('pagerduty'), hostile, 'k');
    expect(header(pd.headers, 'routing_key')).toBe('R0UTINGKEY');
    const ntfy = prepareWebhookRequest(target('ntfy'), hostile, 'k');
    expect(header(ntfy.headers, 'Priority')).toBe('5');
    expect(header(ntfy.headers, 'Tags')).toBe('rotating_light,lock');
    expect(header(ntfy.headers, 'Title')).toBe(`[CRITICAL] ExpirationWarning: ${hostile.ResourceName}`);
    const unicode = prepareWebhookRequest(target('ntfy'), { ...hostile, ResourceName: 'café 🔐' }, 'k');
    const title = header(unicode.headers, 'Title')!;
    expect(title).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/); // RFC 2047 encoded word
    expect(Buffer.from(title.slice(10, -2), 'base64').toString('utf8')).toBe(
      '[CRITICAL] ExpirationWarning: café 🔐',
    );
    expect(ntfy.body).toContain(hostile.Message);
    const warning = prepareWebhookRequest(
      target('ntfy'),
      { ...hostile, Level: 'warning', ResourceName: 'plain' },
      'k',
    );
    expect(header(warning.headers, 'Priority')).toBe('4');
    expect(header(warning.headers, 'Tags')).toBe('warning,lock');
    const fixed = prepareWebhookRequest(target('ntfy', { options: { priority: 9 } }), hostile, 'k');
    expect(header(fixed.headers, 'Priority')).toBe('5');
  });

  it('lets a custom header replace the delivery’s or the kind’s, never the idempotency key; GET sends no body', () => {
    const r = prepareWebhookRequest(
      target('ntfy', {
        headers: { 'user-agent': 'mine/1', Title: 'custom title', Authorization: 'Bearer t' },
      }),
      hostile,
      'event-1',
    );
    const names = r.headers.map(([n]) => n.toLowerCase());
    expect(new Set(names).size).toBe(names.length);
    expect(header(r.headers, 'User-Agent')).toBe('mine/1');
    expect(header(r.headers, 'Title')).toBe('custom title');
    expect(header(r.headers, 'Authorization')).toBe('Bearer t');
    expect(header(r.headers, 'Idempotency-Key')).toBe('event-1');
    expect(() =>
      prepareWebhookRequest(target('generic', { headers: { 'Idempotency-Key': 'x' } }), hostile, 'k'),
    ).toThrow(/set by the delivery itself/);
    const get = prepareWebhookRequest(
      target('generic', { method: 'GET', url: 'https://hooks.example.com/a?l={{.Level | urlquery}}' }),
      hostile,
      'k',
    );
    expect(get.body).toBeUndefined();
    expect(header(get.headers, 'Content-Type')).toBeUndefined();
    expect(get.url).toBe('https://hooks.example.com/a?l=critical');
  });

  it('applies the per-kind fields: chat_id into the URL, the topic as the path', () => {
    const tg = prepareWebhookRequest(
      target('telegram', { url: 'https://api.telegram.test/bot1:A/sendMessage', options: { chat_id: '42' } }),
      hostile,
      'k',
    );
    expect(tg.url).toBe('https://api.telegram.test/bot1:A/sendMessage?chat_id=42');
    const nt = prepareWebhookRequest(
      target('ntfy', { url: 'https://ntfy.example.com/', options: { topic: 'pki alerts' } }),
      hostile,
      'k',
    );
    expect(nt.url).toBe('https://ntfy.example.com/pki%20alerts');
  });

  it('never produces invalid JSON, whatever the alert values hold', () => {
    const text = fc.string({ unit: 'binary', maxLength: 200 });
    fc.assert(
      fc.property(
        text,
        text,
        text,
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        (name, message, level, value) => {
          const alert = { ...hostile, ResourceName: name, Message: message, Level: level, Value: value };
          for (const service of WEBHOOK_SERVICES) {
            if (service === 'ntfy') continue;
            const { body } = prepareWebhookRequest(target(service), alert, 'k');
            expect(() => JSON.parse(body!)).not.toThrow();
          }
        },
      ),
      { seed: 1414, numRuns: 200 },
    );
  });

  it('renders a custom template through json safely, and refuses one that renders invalid JSON', () => {
    const ok = prepareWebhookRequest(
      target('slack', { template: '{"text": {{printf "%s: %s" (.Level | title) .Message | json}}}' }),
      hostile,
      'k',
    );
    expect(JSON.parse(ok.body!).text).toBe(`Critical: ${hostile.Message}`);
    try {
      prepareWebhookRequest(target('slack', { template: '{"text": "{{.Message}}"}' }), hostile, 'k');
      expect.unreachable();
    } catch (error) {
      expect(isCertwrightError(error) && error.fields?.[0]?.field).toBe('template');
    }
    // A custom non-JSON content type lifts the JSON rule for generic webhooks.
    const text = prepareWebhookRequest(
      target('generic', { template: 'alert: {{.Message}}', headers: { 'Content-Type': 'text/plain' } }),
      hostile,
      'k',
    );
    expect(text.body).toBe(`alert: ${hostile.Message}`);
    expect(header(text.headers, 'content-type')).toBe('text/plain');
  });

  it('encodes URL template values: path segments by default, query values through urlquery', () => {
    const r = prepareWebhookRequest(
      target('generic', { url: 'https://hooks.example.com/a/{{.ResourceName}}?m={{.Message | urlquery}}' }),
      { ...hostile, ResourceName: 'a/b c', Message: 'x&y=z' },
      'k',
    );
    expect(r.url).toBe('https://hooks.example.com/a/a%2Fb%20c?m=x%26y%3Dz');
  });
});

describe('request preparation under random templates', () => {
  const FRAGMENTS = [
    '{{',
    '}}',
    '{{- ',
    ' -}}',
    '"',
    '\\',
    '{',
    '}',
    ':',
    ',',
    '.Message',
    '.Value',
    '.Level',
    ' | json',
    ' | urlquery',
    'printf "%q" ',
    'if ',
    'end',
    'range ',
    'else',
    '(',
    ')',
    '$x := ',
    '\n',
    '🔐',
    'x',
  ];
  const text = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }).map((parts) => parts.join(''));

  it('either builds a request or refuses with invalid_input naming url or template', () => {
    fc.assert(
      fc.property(text, text, fc.constantFrom(...WEBHOOK_SERVICES), (template, path, service) => {
        const t = target(service, {
          template,
          url: `${URLS[service].replace(/\?.*$/, '')}/${path}${service === 'telegram' ? '?chat_id=1' : service === 'gotify' ? '?token=t' : ''}`,
        });
        try {
          const r = prepareWebhookRequest(t, hostile, 'k');
          if (service !== 'ntfy') expect(() => JSON.parse(r.body!)).not.toThrow();
          expect(() => new URL(r.url)).not.toThrow();
        } catch (error) {
          expect(isCertwrightError(error) && error.reason === 'invalid_input').toBe(true);
          if (isCertwrightError(error)) expect(['url', 'template']).toContain(error.fields?.[0]?.field);
        }
      }),
      { seed: 2026, numRuns: 500 },
    );
  });
});

describe('alert variables from a certificate notification', () => {
  it('fills Level, Value (days left when raised), Threshold, StartTime and Duration', () => {
    const created = new Date('2026-05-01T00:00:00Z');
    const alert = alertFromEvent(
      {
        id: 'ntf-1',
        type: 'ExpirationWarning',
        channel: 'webhook:wh-1',
        recipient: 'ops',
        subject: 'Certificate api expires in 5 day(s)',
        message: 'Certificate api ...\nAlert threshold: 7 day(s).\nref',
        certificate_id: 'mc-1',
        status: 'pending',
        retry_count: 0,
        next_retry_at: null,
        last_error: null,
        sent_at: null,
        created_at: created,
        updated_at: created,
      },
      {
        certificate: {
          id: 'mc-1',
          name: 'api',
          common_name: 'api.example.com',
          expires_at: new Date('2026-05-06T06:00:00Z'),
        },
        now: new Date('2026-05-01T02:30:00Z'),
        instance: 'https://cw.example.com',
      },
    );
    expect(alert).toMatchObject({
      ID: 'ntf-1',
      Level: 'critical',
      Type: 'ExpirationWarning',
      ResourceName: 'api',
      ResourceID: 'mc-1',
      Value: 5,
      Threshold: 7,
      Duration: '2h30m0s',
      StartTime: '2026-05-01T00:00:00.000Z',
      Timestamp: '2026-05-01T02:30:00.000Z',
      Instance: 'https://cw.example.com',
    });
    expect(goDuration(0)).toBe('0s');
    expect(goDuration(5 * 60_000)).toBe('5m0s');
  });
});
