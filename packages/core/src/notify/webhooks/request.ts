import type { WebhookHeaders, WebhookMethod, WebhookOptions, WebhookService } from '../../domain/webhook.js';
import { fail } from '../../errors.js';
import type { AlertTemplateData } from '../template/alert.js';
import { type ParsedTemplate, parseTemplate, parseUrlTemplate } from '../template/template.js';
import { builtInPayload, isJsonKind } from './kinds.js';

/** What a delivery needs of a webhook: its stored record with the header values opened. */
export interface WebhookTarget {
  url: string;
  method: WebhookMethod;
  service: WebhookService;
  template: string;
  headers: WebhookHeaders;
  options: WebhookOptions;
}

/** One request, ready for the outbound client. */
export interface PreparedRequest {
  url: string;
  method: WebhookMethod;
  headers: [string, string][];
  body?: string;
}

/** RFC 9110 §5.6.2 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Header values: visible ASCII and Unicode text, spaces and tabs; never CR, LF or NUL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const BAD_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;
/** Set by the client or by the delivery itself; a custom header may not replace them. */
const RESERVED = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'idempotency-key',
]);

export const MAX_HEADERS = 50;

/** Checks custom headers; throws `invalid_input` naming `headers[i].name` / `.value`. */
export function checkHeaders(headers: readonly { name: string; value: string }[]): void {
  if (headers.length > MAX_HEADERS) {
    throw fail('invalid_input', `headers: at most ${MAX_HEADERS} headers`, {
      fields: [{ field: 'headers', message: `at most ${MAX_HEADERS} headers` }],
    });
  }
  const seen = new Set<string>();
  headers.forEach(({ name, value }, i) => {
    const bad = (field: string, message: string) =>
      fail('invalid_input', `${field}: ${message}`, { fields: [{ field, message }] });
    if (!TOKEN.test(name)) throw bad(`headers[${i}].name`, 'is not an HTTP header name (RFC 9110 token)');
    const lower = name.toLowerCase();
    if (RESERVED.has(lower)) throw bad(`headers[${i}].name`, `'${name}' is set by the delivery itself`);
    if (seen.has(lower)) throw bad(`headers[${i}].name`, `'${name}' is given twice`);
    seen.add(lower);
    if (BAD_VALUE.test(value)) throw bad(`headers[${i}].value`, 'contains a control character (CR, LF …)');
  });
}

/** Parsed templates by source: parsing costs more than rendering, and sources repeat. */
const cache = new Map<string, ParsedTemplate>();
const CACHE_MAX = 256;

function parsed(kind: 'url' | 'template', source: string): ParsedTemplate {
  const key = `${kind}\u0000${source}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const template =
    kind === 'url'
      ? parseUrlTemplate(source, { field: 'url' })
      : parseTemplate(source, { field: 'template' });
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(key, template);
  return template;
}

const urlError = (message: string) =>
  fail('invalid_input', `url: ${message}`, { fields: [{ field: 'url', message }] });

/** The rendered URL with the per-kind settings applied and the kind's URL rules checked. */
function kindUrl(service: WebhookService, rendered: string, options: WebhookOptions): URL {
  let url: URL;
  try {
    url = new URL(rendered);
  } catch {
    throw urlError('is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw urlError('must be http or https');
  if (url.username || url.password) throw urlError('must not contain credentials (use a header)');
  if (service === 'telegram') {
    if (options.chat_id && !url.searchParams.has('chat_id')) url.searchParams.set('chat_id', options.chat_id);
    if (!url.searchParams.get('chat_id')) {
      throw urlError(
        'a bot-messaging webhook needs chat_id in the URL (…/bot<TOKEN>/sendMessage?chat_id=<CHAT_ID>)',
      );
    }
  }
  if (service === 'gotify' && !url.searchParams.get('token')) {
    throw urlError(
      'a token push webhook needs the application token in the URL (…/message?token=<APP_TOKEN>)',
    );
  }
  if (service === 'ntfy') {
    if (options.topic && (url.pathname === '/' || url.pathname === '')) {
      url.pathname = `/${encodeURIComponent(options.topic)}`;
    }
    if (url.pathname === '/' || url.pathname === '') {
      throw urlError('a topic push webhook needs the topic as the URL path (<server>/<topic>)');
    }
  }
  return url;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/**
 * Builds the request of one delivery: URL template, per-kind URL rules, payload (the custom
 * template or the kind's built-in format), headers. Pure and the same for a live alert and a
 * test: every problem it finds is an `invalid_input` naming the field.
 */
export function prepareWebhookRequest(
  target: WebhookTarget,
  alert: AlertTemplateData,
  idempotencyKey: string,
): PreparedRequest {
  checkHeaders(Object.entries(target.headers).map(([name, value]) => ({ name, value })));
  const url = kindUrl(target.service, parsed('url', target.url).render(alert), target.options);
  const routingKey = header(target.headers, 'routing_key');
  if (target.service === 'pagerduty' && !routingKey) {
    const message = 'an events API webhook needs its routing key (the routing_key field or header)';
    throw fail('invalid_input', `routing_key: ${message}`, { fields: [{ field: 'routing_key', message }] });
  }
  const built = builtInPayload(target.service, alert, {
    options: target.options,
    chatId: url.searchParams.get('chat_id') ?? undefined,
    ...(routingKey ? { routingKey } : {}),
  });
  let body = built.body;
  const customType = header(target.headers, 'content-type');
  if (target.template.trim() !== '') {
    body = parsed('template', target.template).render(alert);
    const json = customType ? /json/i.test(customType) : isJsonKind(target.service);
    if (json) {
      try {
        JSON.parse(body);
      } catch (error) {
        const why = error instanceof Error ? error.message : 'invalid';
        const message = `renders text that is not valid JSON (${why.slice(0, 200)}); embed values with json, e.g. {{.Message | json}}`;
        throw fail('invalid_input', `template: ${message}`, { fields: [{ field: 'template', message }] });
      }
    }
  }
  // The delivery's own headers, then the kind's, then the custom ones; a later header replaces
  // an earlier one of the same name (Idempotency-Key is reserved, so it always stays ours).
  const byName = new Map<string, [string, string]>();
  const put = (name: string, value: string) => byName.set(name.toLowerCase(), [name, value]);
  put('User-Agent', 'certwright-webhook');
  put('Idempotency-Key', idempotencyKey);
  put('X-Certwright-Event', alert.Type);
  if (target.method !== 'GET') put('Content-Type', built.contentType);
  for (const [name, value] of built.headers) put(name, value);
  for (const [name, value] of Object.entries(target.headers)) put(name, value);
  if (target.method === 'GET') byName.delete('content-type');
  const headers = [...byName.values()];
  return {
    url: url.toString(),
    method: target.method,
    headers,
    ...(target.method === 'GET' ? {} : { body }),
  };
}
