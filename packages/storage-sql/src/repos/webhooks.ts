import { newId, type Webhook, type WebhookHeaders, type WebhookRepository } from '@certwright/core';
import type { Selectable } from 'kysely';
import { type Ctx, defined, parseJson, toBool } from '../context.js';
import type { WebhooksTable } from '../schema.js';
import { deleteById, listPage, requireFound, updateById } from './crud.js';

export const headersContext = (id: string) => `webhook:${id}:headers`;

const COLUMNS = [
  'id',
  'name',
  'url',
  'method',
  'service',
  'enabled',
  'template',
  'header_names',
  'events',
  'options',
  'created_at',
  'updated_at',
] as const;

function toWebhook(r: Pick<Selectable<WebhooksTable>, (typeof COLUMNS)[number]>): Webhook {
  return {
    id: r.id,
    name: r.name,
    url: r.url,
    method: r.method as Webhook['method'],
    service: r.service as Webhook['service'],
    enabled: toBool(r.enabled),
    template: r.template,
    header_names: parseJson<string[]>(r.header_names, []),
    events: parseJson<Webhook['events']>(r.events, []),
    options: parseJson<Webhook['options']>(r.options, {}),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function webhookRepository(ctx: Ctx): WebhookRepository {
  const get = async (id: string) => {
    const r = await ctx.db.selectFrom('webhooks').select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return r ? toWebhook(r) : null;
  };
  const require = requireFound('webhook', get);
  const seal = (id: string, headers: WebhookHeaders) =>
    ctx.box.seal(JSON.stringify(headers), headersContext(id));
  return {
    get,
    require,
    async getWithHeaders(id) {
      const r = await ctx.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
      if (!r) return null;
      const headers = JSON.parse(await ctx.box.open(r.headers_sealed, headersContext(id))) as WebhookHeaders;
      return { ...toWebhook(r), headers };
    },
    async create(input) {
      const now = input.created_at ?? ctx.clock.now();
      const headers = input.headers ?? {};
      const hook: Webhook = {
        id: input.id ?? newId('webhook'),
        name: input.name,
        url: input.url,
        method: input.method ?? 'POST',
        service: input.service ?? 'generic',
        enabled: input.enabled ?? true,
        template: input.template ?? '',
        header_names: Object.keys(headers).sort(),
        events: input.events ?? [],
        options: input.options ?? {},
        created_at: now,
        updated_at: now,
      };
      await ctx.db
        .insertInto('webhooks')
        .values({
          ...hook,
          header_names: JSON.stringify(hook.header_names),
          events: JSON.stringify(hook.events),
          options: JSON.stringify(hook.options),
          headers_sealed: await seal(hook.id, headers),
        })
        .execute();
      return hook;
    },
    async update(id, patch) {
      await require(id);
      const { headers, events, options, ...rest } = patch;
      await updateById(ctx, 'webhooks', id, {
        ...defined(rest),
        ...(events !== undefined ? { events: JSON.stringify(events) } : {}),
        ...(options !== undefined ? { options: JSON.stringify(options) } : {}),
        ...(headers !== undefined
          ? {
              header_names: JSON.stringify(Object.keys(headers).sort()),
              headers_sealed: await seal(id, headers),
            }
          : {}),
      });
      return require(id);
    },
    delete: (id) => deleteById(ctx, 'webhooks', id, 'webhook'),
    async list(query = {}) {
      let base = ctx.db.selectFrom('webhooks');
      if (query.enabled !== undefined) base = base.where('enabled', '=', query.enabled);
      return listPage(base, query, (q) => q.select(COLUMNS).orderBy('name').orderBy('id'), toWebhook);
    },
  };
}
