import { z } from 'zod';
import { idSchema, timestampSchema } from '../domain/common.js';
import { type NotificationEvent, notificationTypeSchema } from '../domain/notification.js';
import {
  WEBHOOK_URL_MASK,
  type Webhook,
  type WebhookHeaders,
  type WebhookOptions,
  webhookMethodSchema,
  webhookServiceSchema,
} from '../domain/webhook.js';
import { fail, isCertwrightError, notFound } from '../errors.js';
import { parseAllowlist } from '../net/allowlist.js';
import type { OutboundClient } from '../net/client.js';
import { sampleAlert } from '../notify/webhooks/alert.js';
import { undeliverableEntry } from '../notify/webhooks/allowlist-entries.js';
import { WEBHOOK_CHANNEL_PREFIX, WebhookChannel, webhookChannelName } from '../notify/webhooks/channel.js';
import {
  checkHeaders,
  MAX_HEADERS,
  prepareWebhookRequest,
  type WebhookTarget,
} from '../notify/webhooks/request.js';
import {
  type WebhookDeliveryResult,
  WebhookSender,
  type WebhookSenderOptions,
} from '../notify/webhooks/sender.js';
import { type AuditService, configEvent } from './audit.js';
import { type KeptSecret, requireSecretsForNewOrigin } from './bound-secrets.js';
import type { Actor, ServiceDeps } from './context.js';
import { parseInput } from './input.js';
import type { NotificationService } from './notifications.js';
import { type Paged, paged, pageQuerySchema, storagePage } from './paging.js';

/** What the API shows instead of a header value: values are sealed and never returned. */
export const MASKED_VALUE = '********';

/** Dead deliveries one redeliver call requeues. */
export const REDELIVER_MAX = 1000;

/** The setting that holds the private ranges webhooks may reach. */
export const WEBHOOK_ALLOWLIST_SETTING = 'webhooks.allowed_private_ranges';

const headerInputSchema = z
  .object({
    name: z.string().min(1).max(256),
    value: z.string().max(8192).describe(`the value, or ${MASKED_VALUE} to keep the stored one`),
  })
  .strict();

const fields = {
  name: z.string().trim().min(1).max(255),
  url: z
    .string()
    .min(1)
    .max(8192)
    .describe(
      'http(s) URL; may hold template actions in its path and query; sealed at rest, shown masked; the masked form keeps the stored URL',
    ),
  method: webhookMethodSchema,
  service: webhookServiceSchema.describe('endpoint kind (docs/notifications/webhooks.md)'),
  enabled: z.boolean(),
  template: z
    .string()
    .max(70_000)
    .describe('Go-template text of the payload; empty = the kind’s built-in format'),
  headers: z.array(headerInputSchema).max(MAX_HEADERS),
  events: z
    .array(notificationTypeSchema)
    .max(20)
    .describe('notification types this webhook receives; empty = every type'),
  chat_id: z
    .string()
    .min(1)
    .max(128)
    .nullable()
    .describe('bot-messaging kind: the chat (set as chat_id in the URL)'),
  topic: z
    .string()
    .min(1)
    .max(128)
    .nullable()
    .describe('topic push kind: the topic, when the URL has no path'),
  priority: z
    .number()
    .int()
    .min(1)
    .max(10)
    .nullable()
    .describe('push kinds: a fixed priority instead of one by level'),
  routing_key: z
    .string()
    .min(1)
    .max(256)
    .describe('events API kind: the integration routing key (stored sealed as the routing_key header)'),
};

export const webhookCreateSchema = z
  .object({
    ...fields,
    method: fields.method.default('POST'),
    service: fields.service.default('generic'),
    enabled: fields.enabled.default(true),
    template: fields.template.default(''),
    headers: fields.headers.default([]),
    events: fields.events.default([]),
    chat_id: fields.chat_id.optional(),
    topic: fields.topic.optional(),
    priority: fields.priority.optional(),
    routing_key: fields.routing_key.optional(),
  })
  .strict();
export type WebhookCreate = z.input<typeof webhookCreateSchema>;

export const webhookUpdateSchema = z.object(fields).partial().strict();
export type WebhookUpdate = z.input<typeof webhookUpdateSchema>;

export const webhookTestSchema = webhookUpdateSchema
  .extend({ id: idSchema.optional().describe('test a stored webhook; given fields replace its own') })
  .strict();
export type WebhookTest = z.input<typeof webhookTestSchema>;

export const webhookViewSchema = z.object({
  id: idSchema,
  name: z.string(),
  url: z
    .string()
    .describe(
      `masked: the origin, and ${WEBHOOK_URL_MASK} for the path and query (sent back, it keeps the stored URL)`,
    ),
  method: webhookMethodSchema,
  service: webhookServiceSchema,
  enabled: z.boolean(),
  template: z.string(),
  headers: z.array(z.object({ name: z.string(), value: z.literal(MASKED_VALUE) })),
  events: z.array(notificationTypeSchema),
  chat_id: z.string().nullable(),
  topic: z.string().nullable(),
  priority: z.number().int().nullable(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type WebhookView = z.infer<typeof webhookViewSchema>;

export const webhookTestResultSchema = z.object({
  delivered: z.boolean(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().int(),
  response_excerpt: z.string(),
  error: z.string().nullable(),
  meaning: z.string().nullable(),
  retryable: z.boolean(),
});

export const webhookRedeliverResultSchema = z.object({
  requeued: z.number().int(),
  remaining: z.number().int().describe('dead deliveries still left (call again)'),
});

export const webhookSecuritySchema = z
  .object({
    allowed_private_ranges: z
      .string()
      .max(8192)
      .describe('comma-separated CIDR ranges or single IPs; empty = every private address refused'),
  })
  .strict();
export type WebhookSecurity = z.infer<typeof webhookSecuritySchema>;

export const webhookListSchema = pageQuerySchema;
export const webhookDeliveryListSchema = pageQuerySchema;

export interface WebhookServiceOptions {
  /**
   * The guarded client of one delivery, given the allowlist as stored now:
   * `(ranges) => createWebhookClient(ranges)` from `@certwright/core/net` (kept out of the root
   * import, which stays free of `node:http`). Absent → creating, testing and delivering fail
   * with `unavailable` saying so.
   */
  outbound?: (allowedPrivateRanges: string) => OutboundClient | Promise<OutboundClient>;
  /** Per-attempt timeout (default 10 s) and response read cap (default 64 KiB). */
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** `.Instance` and `.Node` of every alert. */
  instance?: string;
  node?: string;
  /** Told of every delivery and test result (the server counts `svc_webhook_deliveries_total`). */
  onResult?: WebhookSenderOptions['onResult'];
}

/**
 * The URL as the API shows it (masked) stands for the stored one, like a masked header value:
 * a client that sends back what it read changes nothing.
 */
function keepMaskedUrl<T extends { url?: string | undefined }>(data: T, stored: Webhook): T {
  if (data.url === undefined || data.url !== stored.url_masked) return data;
  const { url: _, ...rest } = data;
  return rest as T;
}

function view(hook: Webhook): WebhookView {
  return {
    id: hook.id,
    name: hook.name,
    url: hook.url_masked,
    method: hook.method,
    service: hook.service,
    enabled: hook.enabled,
    template: hook.template,
    headers: hook.header_names.map((name) => ({ name, value: MASKED_VALUE })),
    events: hook.events,
    chat_id: hook.options.chat_id ?? null,
    topic: hook.options.topic ?? null,
    priority: hook.options.priority ?? null,
    created_at: hook.created_at,
    updated_at: hook.updated_at,
  };
}

type Fields = z.output<typeof webhookUpdateSchema>;

/**
 * The headers a write leaves stored: the list given (a masked value keeps the stored value of
 * that name), or the stored list when none is given, plus `routing_key` when given as a field.
 * `kept` names every stored value the write keeps instead of being given, as the field of the
 * list it is in (`headers[i].value`; without a list, the order the API shows: by name).
 */
function mergeHeaders(
  stored: WebhookHeaders,
  given: Fields,
): { headers: WebhookHeaders; kept: KeptSecret[]; changed: boolean } {
  const byLower = new Map(Object.entries(stored).map(([k, v]) => [k.toLowerCase(), v]));
  const list =
    given.headers ??
    Object.keys(stored)
      .sort()
      .map((name) => ({ name, value: MASKED_VALUE }));
  checkHeaders(list.map((h) => ({ name: h.name, value: h.value === MASKED_VALUE ? '' : h.value })));
  const out: WebhookHeaders = {};
  const kept: (KeptSecret & { name: string })[] = [];
  list.forEach((h, i) => {
    if (h.value !== MASKED_VALUE) {
      out[h.name] = h.value;
      return;
    }
    const value = byLower.get(h.name.toLowerCase());
    if (value === undefined) {
      const message = `is masked but no value of '${h.name}' is stored; give the value`;
      throw fail('invalid_input', `headers[${i}].value: ${message}`, {
        fields: [{ field: `headers[${i}].value`, message }],
      });
    }
    out[h.name] = value;
    kept.push({ field: `headers[${i}].value`, name: h.name });
  });
  const isRoutingKey = (name: string) => name.toLowerCase() === 'routing_key';
  if (given.routing_key !== undefined) {
    for (const name of Object.keys(out)) if (isRoutingKey(name)) delete out[name];
    out.routing_key = given.routing_key;
  }
  return {
    headers: out,
    kept: kept
      .filter((k) => given.routing_key === undefined || !isRoutingKey(k.name))
      .map(({ field }) => ({ field })),
    changed: given.headers !== undefined || given.routing_key !== undefined,
  };
}

function mergeOptions(stored: WebhookOptions, given: Fields): WebhookOptions {
  const out: WebhookOptions = { ...stored };
  for (const key of ['chat_id', 'topic', 'priority'] as const) {
    const value = given[key];
    if (value === null) delete out[key];
    else if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  return out;
}

/**
 * Webhooks: the management API (001's paths), validation at create/update/test, the test
 * action, the delivery history and the private-range allowlist. Deliveries of live alerts run
 * through the notification pipeline on the `webhook:` channel this service registers; the test
 * action calls the same sender with the same guard.
 */
export class WebhookNotificationService {
  readonly sender: WebhookSender;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly audit: AuditService,
    private readonly notifications: NotificationService,
    private readonly options: WebhookServiceOptions = {},
  ) {
    this.sender = new WebhookSender({
      client: () => this.client(),
      now: () => deps.clock.now(),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.maxResponseBytes !== undefined ? { maxResponseBytes: options.maxResponseBytes } : {}),
      ...(options.onResult ? { onResult: options.onResult } : {}),
    });
    const registry = notifications.channels;
    if (!registry.get(WEBHOOK_CHANNEL_PREFIX)) {
      registry.register(
        new WebhookChannel({
          storage: deps.storage,
          clock: deps.clock,
          sender: this.sender,
          ...(options.instance ? { instance: options.instance } : {}),
          ...(options.node ? { node: options.node } : {}),
        }),
      );
    }
  }

  /** The guarded client with the allowlist as stored now (a change applies to the next delivery). */
  async client(): Promise<OutboundClient> {
    const stored = (await this.deps.storage.settings.get(WEBHOOK_ALLOWLIST_SETTING)) ?? '';
    return this.#outbound(stored);
  }

  #outbound(ranges: string): OutboundClient | Promise<OutboundClient> {
    if (!this.options.outbound) {
      throw fail(
        'unavailable',
        'webhook deliveries need an outbound client: pass webhooks.outbound (createWebhookClient from @certwright/core/net) to createServices',
      );
    }
    return this.options.outbound(ranges);
  }

  async list(query: z.input<typeof webhookListSchema> = {}): Promise<Paged<WebhookView>> {
    const window = parseInput(webhookListSchema, query);
    const result = await this.deps.storage.webhooks.list(storagePage(window));
    return paged({ items: result.items.map(view), total: result.total }, window);
  }

  async get(id: string): Promise<WebhookView> {
    const hook = await this.deps.storage.webhooks.get(id);
    if (!hook) throw notFound('webhook', id);
    return view(hook);
  }

  async create(actor: Actor, input: WebhookCreate): Promise<WebhookView> {
    const data = parseInput(webhookCreateSchema, input);
    const { headers } = mergeHeaders({}, data);
    const target: WebhookTarget = {
      url: data.url,
      method: data.method,
      service: data.service,
      template: data.template,
      headers,
      options: mergeOptions({}, data),
    };
    await this.validate(target);
    return this.deps.storage.transaction(async (tx) => {
      const hook = await tx.webhooks.create({
        name: data.name,
        url: data.url,
        method: data.method,
        service: data.service,
        enabled: data.enabled,
        template: data.template,
        headers,
        events: [...new Set(data.events)],
        options: target.options,
      });
      await this.audit.record(actor, configEvent('webhook_created', 'webhook', hook.id, summary(hook)), tx);
      return view(hook);
    });
  }

  /** Changes only the fields given; a header whose value is masked keeps its stored value. */
  async update(actor: Actor, id: string, input: WebhookUpdate): Promise<WebhookView> {
    const stored = await this.deps.storage.webhooks.getWithHeaders(id);
    if (!stored) throw notFound('webhook', id);
    const data = keepMaskedUrl(parseInput(webhookUpdateSchema, input), stored);
    const merged = mergeHeaders(stored.headers, data);
    const headers = merged.changed ? merged.headers : undefined;
    const target: WebhookTarget = {
      url: data.url ?? stored.url,
      method: data.method ?? stored.method,
      service: data.service ?? stored.service,
      template: data.template ?? stored.template,
      headers: merged.headers,
      options: mergeOptions(stored.options, data),
    };
    await this.validate(target);
    requireSecretsForNewOrigin({ from: stored.url, to: target.url, kept: merged.kept });
    return this.deps.storage.transaction(async (tx) => {
      if (!(await tx.webhooks.get(id))) throw notFound('webhook', id);
      const hook = await tx.webhooks.update(id, {
        ...(data.name !== undefined ? { name: data.name } : {}),
        ...(data.url !== undefined ? { url: data.url } : {}),
        ...(data.method !== undefined ? { method: data.method } : {}),
        ...(data.service !== undefined ? { service: data.service } : {}),
        ...(data.enabled !== undefined ? { enabled: data.enabled } : {}),
        ...(data.template !== undefined ? { template: data.template } : {}),
        ...(data.events !== undefined ? { events: [...new Set(data.events)] } : {}),
        ...(headers !== undefined ? { headers } : {}),
        options: target.options,
      });
      await this.audit.record(
        actor,
        configEvent('webhook_updated', 'webhook', id, {
          ...summary(hook),
          changed: Object.keys(data).sort(),
        }),
        tx,
      );
      return view(hook);
    });
  }

  async delete(actor: Actor, id: string): Promise<void> {
    await this.deps.storage.transaction(async (tx) => {
      if (!(await tx.webhooks.get(id))) throw notFound('webhook', id);
      await tx.webhooks.delete(id);
      await this.audit.record(actor, configEvent('webhook_deleted', 'webhook', id), tx);
    });
  }

  /**
   * The test action: validates like a create, renders a sample alert and sends it once through
   * the sender live alerts use (same templates, headers and guard), and reports the answer.
   * With `id`, the stored webhook is the base (masked header values keep theirs).
   */
  async test(actor: Actor, input: WebhookTest): Promise<WebhookDeliveryResult> {
    const given = parseInput(webhookTestSchema, input);
    const stored = given.id ? await this.deps.storage.webhooks.getWithHeaders(given.id) : null;
    if (given.id && !stored) throw notFound('webhook', given.id);
    const data = stored ? keepMaskedUrl(given, stored) : given;
    if (!stored && data.url === undefined) {
      throw fail('invalid_input', 'url: is required', { fields: [{ field: 'url', message: 'is required' }] });
    }
    const merged = mergeHeaders(stored?.headers ?? {}, data);
    const target: WebhookTarget = {
      url: data.url ?? stored?.url ?? '',
      method: data.method ?? stored?.method ?? 'POST',
      service: data.service ?? stored?.service ?? 'generic',
      template: data.template ?? stored?.template ?? '',
      headers: merged.headers,
      options: mergeOptions(stored?.options ?? {}, data),
    };
    // Stored secrets go only to the stored origin: a test at another one must give them again.
    await this.validate(target);
    if (stored) requireSecretsForNewOrigin({ from: stored.url, to: target.url, kept: merged.kept });
    const now = this.deps.clock.now();
    const alert = sampleAlert(now, {
      ...(this.options.instance ? { instance: this.options.instance } : {}),
      ...(this.options.node ? { node: this.options.node } : {}),
    });
    const result = await this.sender.send(target, alert, `test-${now.getTime()}`);
    await this.audit.record(
      actor,
      configEvent('webhook_tested', 'webhook', data.id ?? 'unsaved', {
        service: target.service,
        delivered: result.delivered,
        status_code: result.status_code,
      }),
    );
    return result;
  }

  /** A webhook's deliveries (its notification events), newest first. */
  async deliveries(
    id: string,
    query: z.input<typeof webhookDeliveryListSchema> = {},
  ): Promise<Paged<NotificationEvent>> {
    const window = parseInput(webhookDeliveryListSchema, query);
    if (!(await this.deps.storage.webhooks.get(id))) throw notFound('webhook', id);
    return this.notifications.list({ channel: webhookChannelName(id), ...window });
  }

  /**
   * Requeues every dead delivery of a webhook (its receiver is back): each goes pending with its
   * retry budget reset, keeps its event id (so its `Idempotency-Key`), and is audited as any
   * requeue. At most {@link REDELIVER_MAX} per call; `remaining` says how many are left.
   */
  async redeliver(actor: Actor, id: string): Promise<{ requeued: number; remaining: number }> {
    if (!(await this.deps.storage.webhooks.get(id))) throw notFound('webhook', id);
    const channel = webhookChannelName(id);
    let requeued = 0;
    while (requeued < REDELIVER_MAX) {
      const page = await this.deps.storage.notifications.list({ channel, status: 'dead', perPage: 100 });
      if (page.items.length === 0) break;
      for (const event of page.items) {
        await this.notifications.requeue(actor, event.id);
        requeued += 1;
      }
    }
    const left = await this.deps.storage.notifications.list({ channel, status: 'dead', perPage: 1 });
    return { requeued, remaining: left.total };
  }

  async getSecurity(): Promise<WebhookSecurity> {
    return {
      allowed_private_ranges: (await this.deps.storage.settings.get(WEBHOOK_ALLOWLIST_SETTING)) ?? '',
    };
  }

  /** Replaces the allowlist (one bad entry refuses it all); the next delivery uses it. */
  async setSecurity(actor: Actor, input: WebhookSecurity): Promise<WebhookSecurity> {
    const data = parseInput(webhookSecuritySchema, input);
    const allowlist = parseAllowlist(data.allowed_private_ranges, 'allowed_private_ranges');
    const value = allowlist.toString();
    // A documentation, link-local, reserved … entry would be stored and then refuse every
    // delivery anyway: refused here, naming the entry.
    const undeliverable = undeliverableEntry(allowlist);
    if (undeliverable) {
      const message = `'${undeliverable.entry}' is ${undeliverable.category.replace('_', '-')} space, which webhooks never reach whatever the allowlist says`;
      throw fail('invalid_input', `allowed_private_ranges: ${message}`, {
        fields: [{ field: 'allowed_private_ranges', message }],
      });
    }
    // A loopback entry admits nothing unless the client was built with the code-level opt-in
    // (test rigs): say so instead of storing an entry that silently does nothing.
    if (allowlist.loopbackEntries.length > 0) {
      const guard = (await this.#outbound(value)).guard;
      const refused = allowlist.loopbackEntries.find((entry) => !guard.check(entry.split('/')[0]!).admitted);
      if (refused) {
        const message = `'${refused}' is loopback, which webhooks never reach whatever the allowlist says`;
        throw fail('invalid_input', `allowed_private_ranges: ${message}`, {
          fields: [{ field: 'allowed_private_ranges', message }],
        });
      }
    }
    await this.deps.storage.transaction(async (tx) => {
      await tx.settings.put(WEBHOOK_ALLOWLIST_SETTING, value);
      await this.audit.record(
        actor,
        configEvent('webhook_allowlist_changed', 'setting', WEBHOOK_ALLOWLIST_SETTING, {
          allowed_private_ranges: value,
        }),
        tx,
      );
    });
    return { allowed_private_ranges: value };
  }

  /**
   * Create, update and test time: the templates parse and render a sample alert, the kind's
   * rules hold, JSON kinds get JSON, and the URL's host resolves to an allowed address.
   */
  async validate(target: WebhookTarget): Promise<void> {
    const prepared = prepareWebhookRequest(target, sampleAlert(this.deps.clock.now()), 'validation');
    const client = await this.client();
    try {
      await client.checkUrl(prepared.url, 'url');
    } catch (error) {
      if (isCertwrightError(error) && error.reason === 'dns_failed') {
        const message = `the host '${new URL(prepared.url).hostname}' does not resolve`;
        throw fail('invalid_input', `url: ${message}`, { fields: [{ field: 'url', message }], cause: error });
      }
      throw error;
    }
  }
}

function summary(hook: Webhook) {
  return {
    name: hook.name,
    service: hook.service,
    method: hook.method,
    enabled: hook.enabled,
    header_names: hook.header_names,
    events: hook.events,
  };
}
