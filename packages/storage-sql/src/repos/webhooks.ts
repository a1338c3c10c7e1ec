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
    // Masked again on the way out: a 2.0.0 instance during a rolling upgrade writes the URL in
    // clear (see storedUrl), and masking a masked URL leaves it as it is.
    url_masked: maskWebhookUrl(r.url),
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
      return { ...toWebhook(r), url: await storedUrl(ctx.box, r), headers };
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
 * The webhook's URL. A row not sealed yet holds it in clear (stored before migration 28, or
 * written by a 2.0.0 instance). A 2.0.0 instance sharing the database during a rolling upgrade
 * (docs/operations/upgrades.md) knows nothing of `url_sealed`: when it changes a URL it writes
 * the new one to `url` in clear and leaves the sealed one as it was. This release always writes
 * `url` as the masked form of the sealed URL, so a `url` that is not that masked form is a newer
 * URL written by 2.0.0, and it wins.
 */
async function storedUrl(
  box: SecretBox,
  r: Pick<Selectable<WebhooksTable>, 'id' | 'url' | 'url_sealed'>,
): Promise<string> {
  if (r.url_sealed === null) return r.url;
  const sealed = await box.open(r.url_sealed, urlContext(r.id));
  return r.url === maskWebhookUrl(sealed) ? sealed : r.url;
}

/**
 * Seals the URL of every webhook stored before migration 28 (or left unsealed by a start that
 * died after it, or created or changed by a 2.0.0 instance during a rolling upgrade: see
 * storedUrl) and keeps only its masked form in clear. Runs under the migration lock at every
 * start; it opens every sealed URL, and deployments keep tens of webhooks, not thousands.
 */
export async function sealWebhookUrls(db: Kysely<Database>, box: SecretBox): Promise<number> {
  const rows = await db.selectFrom('webhooks').select(['id', 'url', 'url_sealed']).execute();
  let sealed = 0;
  for (const row of rows) {
    if (row.url_sealed !== null) {
      // Sealed, and the clear column its masked form: as this release leaves it.
      // One no key of the ring opens is left as it is: the key check and the re-seal name such
      // rows (docs/operations/key-rotation.md); a start is not the place to fail on them.
      const current = await box.open(row.url_sealed, urlContext(row.id)).catch(() => null);
      if (current === null || row.url === maskWebhookUrl(current)) continue;
    }
    // Otherwise the clear column holds the URL (storedUrl).
    const url = row.url;
    // Only if the row is still as read: an instance serving meanwhile may have changed it.
    await db
      .updateTable('webhooks')
      .set({ url: maskWebhookUrl(url), url_sealed: await box.seal(url, urlContext(row.id)) })
      .where('id', '=', row.id)
      .where('url', '=', row.url)
      .execute();
    sealed += 1;
  }
  return sealed;
}
