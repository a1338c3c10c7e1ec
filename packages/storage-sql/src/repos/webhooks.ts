import {
  maskWebhookUrl,
  newId,
  type SecretBox,
  type Webhook,
  type WebhookHeaders,
  type WebhookRepository,
} from '@certwright/core';
import type { Kysely, Selectable } from 'kysely';
import { type Ctx, defined, parseJson, toBool } from '../context.js';
import type { Database, WebhooksTable } from '../schema.js';
import { deleteById, listPage, requireFound, updateById } from './crud.js';

export const headersContext = (id: string) => `webhook:${id}:headers`;
export const urlContext = (id: string) => `webhook:${id}:url`;

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
    url_masked: r.url,
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
      // A row not sealed yet holds its URL in clear (only between migration 28 and the sealing
      // that follows it in the same start).
      const url = r.url_sealed === null ? r.url : await ctx.box.open(r.url_sealed, urlContext(id));
      return { ...toWebhook(r), url, headers };
    },
    async create(input) {
      const now = input.created_at ?? ctx.clock.now();
      const headers = input.headers ?? {};
      const hook: Webhook = {
        id: input.id ?? newId('webhook'),
        name: input.name,
        url_masked: maskWebhookUrl(input.url),
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
      const { url_masked, ...columns } = hook;
      await ctx.db
        .insertInto('webhooks')
        .values({
          ...columns,
          url: url_masked,
          url_sealed: await ctx.box.seal(input.url, urlContext(hook.id)),
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
      const { headers, events, options, url, ...rest } = patch;
      await updateById(ctx, 'webhooks', id, {
        ...defined(rest),
        ...(url !== undefined
          ? { url: maskWebhookUrl(url), url_sealed: await ctx.box.seal(url, urlContext(id)) }
          : {}),
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

/**
 * Seals the URL of every webhook stored before migration 28 (or left unsealed by a start that
 * died after it) and keeps only its masked form in clear. Runs under the migration lock at every
 * start; a database with every row sealed costs one query.
 */
export async function sealWebhookUrls(db: Kysely<Database>, box: SecretBox): Promise<number> {
  const rows = await db
    .selectFrom('webhooks')
    .select(['id', 'url'])
    .where('url_sealed', 'is', null)
    .execute();
  for (const row of rows) {
    await db
      .updateTable('webhooks')
      .set({ url: maskWebhookUrl(row.url), url_sealed: await box.seal(row.url, urlContext(row.id)) })
      .where('id', '=', row.id)
      .where('url_sealed', 'is', null)
      .execute();
  }
  return rows.length;
}
