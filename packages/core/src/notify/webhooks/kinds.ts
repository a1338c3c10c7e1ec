import type { WebhookOptions, WebhookService } from '../../domain/webhook.js';
import type { AlertTemplateData } from '../template/alert.js';

/**
 * The built-in payload of each endpoint kind (docs/notifications/webhooks.md). Every payload is
 * built as data and serialized by `JSON.stringify`, so a quote, a newline or an emoji in any
 * value can never produce invalid JSON; text that a receiver reads as markup (HTML for the bot
 * API, markdown for the token push server) is escaped for that markup first.
 */
export interface BuiltPayload {
  body: string;
  contentType: string;
  /** Extra request headers the kind sends (topic push title, priority and tags). */
  headers: [string, string][];
}

/** Whether a kind's receiver expects a JSON body (a custom template must then render JSON). */
export function isJsonKind(service: WebhookService): boolean {
  return service !== 'ntfy';
}

const EMOJI: Record<string, string> = { critical: '🚨', warning: '⚠️', info: 'ℹ️' };
const emoji = (level: string) => EMOJI[level] ?? '🔔';

/** Colors by level: Discord takes an integer, Teams and Slack a hex string. */
const COLOR: Record<string, number> = { critical: 0xd32f2f, warning: 0xf9a825, info: 0x1976d2 };
const color = (level: string) => COLOR[level] ?? 0x757575;
const hex = (level: string) => color(level).toString(16).padStart(6, '0');

/** Topic push priority (1 min … 5 max) and emoji tags by level. */
const NTFY: Record<string, { priority: number; tags: string }> = {
  critical: { priority: 5, tags: 'rotating_light,lock' },
  warning: { priority: 4, tags: 'warning,lock' },
  info: { priority: 3, tags: 'information_source,lock' },
};

/** Events API v2 severities: critical, error, warning, info. */
const SEVERITY: Record<string, string> = {
  critical: 'critical',
  error: 'error',
  warning: 'warning',
  info: 'info',
};

const title = (a: AlertTemplateData) =>
  `[${a.Level.toUpperCase()}] ${a.Type}${a.ResourceName ? `: ${a.ResourceName}` : ''}`;

/** The detail lines every rich message carries. */
function details(a: AlertTemplateData): [string, string][] {
  const rows: [string, string][] = [
    ['Level', a.Level],
    ['Type', a.Type],
    ['Resource', a.ResourceName ? `${a.ResourceName} (${a.ResourceID})` : a.ResourceID],
    ['Value', String(a.Value)],
    ['Threshold', String(a.Threshold)],
    ['Started', a.StartTime],
  ];
  if (a.Node) rows.push(['Node', a.Node]);
  if (a.Instance) rows.push(['Instance', a.Instance]);
  return rows.filter(([, v]) => v !== '');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

/** Backslash-escapes markdown's punctuation so a value prints as itself. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|>~<]/g, '\\$&');
}

/** The alert as plain JSON fields: the default body of a `generic` webhook. */
function genericPayload(a: AlertTemplateData): unknown {
  return {
    id: a.ID,
    level: a.Level,
    type: a.Type,
    resource_name: a.ResourceName,
    resource_id: a.ResourceID,
    node: a.Node,
    instance: a.Instance,
    message: a.Message,
    value: a.Value,
    threshold: a.Threshold,
    duration: a.Duration,
    timestamp: a.Timestamp,
    start_time: a.StartTime,
  };
}

function slackPayload(a: AlertTemplateData): unknown {
  const text = `${emoji(a.Level)} ${title(a)}\n${a.Message}`;
  return {
    text,
    attachments: [
      {
        color: `#${hex(a.Level)}`,
        fallback: text,
        fields: details(a).map(([k, v]) => ({ title: k, value: v, short: true })),
        ts: Math.floor(Date.parse(a.Timestamp) / 1000) || undefined,
      },
    ],
  };
}

function discordPayload(a: AlertTemplateData): unknown {
  return {
    content: `${emoji(a.Level)} ${title(a)}`.slice(0, 2000),
    embeds: [
      {
        title: title(a).slice(0, 256),
        description: a.Message.slice(0, 4096),
        color: color(a.Level),
        fields: details(a).map(([k, v]) => ({ name: k, value: v.slice(0, 1024), inline: true })),
        timestamp: a.Timestamp,
      },
    ],
  };
}

function telegramPayload(a: AlertTemplateData, chatId: string | undefined): unknown {
  const lines = [
    `${emoji(a.Level)} <b>${escapeHtml(title(a))}</b>`,
    '',
    escapeHtml(a.Message),
    '',
    ...details(a).map(([k, v]) => `<b>${escapeHtml(k)}:</b> ${escapeHtml(v)}`),
  ];
  return {
    ...(chatId ? { chat_id: chatId } : {}),
    text: lines.join('\n').slice(0, 4096),
    parse_mode: 'HTML',
    disable_web_page_preview: true,
  };
}

function gotifyPayload(a: AlertTemplateData, options: WebhookOptions): unknown {
  const message = [
    `${emoji(a.Level)} **${escapeMarkdown(title(a))}**`,
    '',
    escapeMarkdown(a.Message),
    '',
    ...details(a).map(([k, v]) => `- **${escapeMarkdown(k)}:** ${escapeMarkdown(v)}`),
  ].join('\n');
  return {
    title: `${emoji(a.Level)} ${title(a)}`,
    message,
    priority: options.priority ?? (a.Level === 'critical' ? 8 : a.Level === 'warning' ? 5 : 2),
    extras: { 'client::display': { contentType: 'text/markdown' } },
  };
}

function teamsPayload(a: AlertTemplateData): unknown {
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: title(a),
    themeColor: hex(a.Level),
    title: `${emoji(a.Level)} ${title(a)}`,
    text: a.Message,
    sections: [{ facts: details(a).map(([name, value]) => ({ name, value })) }],
  };
}

/** Groups an alert's repeats (and retries) under one incident: same resource, same type. */
export function dedupKey(a: AlertTemplateData): string {
  return `certwright/${a.ResourceID || a.ID}/${a.Type}`.slice(0, 255);
}

function pagerDutyPayload(a: AlertTemplateData, routingKey: string | undefined): unknown {
  return {
    ...(routingKey ? { routing_key: routingKey } : {}),
    event_action: 'trigger',
    dedup_key: dedupKey(a),
    payload: {
      summary: `${title(a)} — ${a.Message}`.slice(0, 1024),
      source: a.Instance || a.Node || 'certwright',
      severity: SEVERITY[a.Level] ?? 'warning',
      timestamp: a.Timestamp,
      component: a.ResourceName || a.ResourceID,
      class: a.Type,
      custom_details: genericPayload(a),
    },
  };
}

/** Non-ASCII header text as an RFC 2047 encoded word (the topic push server decodes it). */
function headerText(text: string): string {
  const oneLine = text.replace(/[\r\n]+/g, ' ');
  if (/^[\x20-\x7e]*$/.test(oneLine)) return oneLine;
  return `=?UTF-8?B?${Buffer.from(oneLine, 'utf8').toString('base64')}?=`;
}

function ntfyPayload(a: AlertTemplateData, options: WebhookOptions): BuiltPayload {
  const style = NTFY[a.Level] ?? { priority: 3, tags: 'bell,lock' };
  const body = [a.Message, '', ...details(a).map(([k, v]) => `${k}: ${v}`)].join('\n');
  return {
    body,
    contentType: 'text/plain; charset=utf-8',
    headers: [
      ['Title', headerText(title(a))],
      ['Priority', String(Math.min(5, options.priority ?? style.priority))],
      ['Tags', style.tags],
    ],
  };
}

/** Context a kind needs beyond the alert. */
export interface KindContext {
  options: WebhookOptions;
  /** The bot API's chat id read from the URL. */
  chatId?: string;
  /** The events API routing key (the `routing_key` header). */
  routingKey?: string;
}

/** The built-in payload of `service` for one alert. */
export function builtInPayload(
  service: WebhookService,
  a: AlertTemplateData,
  ctx: KindContext,
): BuiltPayload {
  if (service === 'ntfy') return ntfyPayload(a, ctx.options);
  const json = (value: unknown): BuiltPayload => ({
    body: JSON.stringify(value),
    contentType: 'application/json',
    headers: [],
  });
  switch (service) {
    case 'generic':
      return json(genericPayload(a));
    case 'slack':
      return json(slackPayload(a));
    case 'discord':
      return json(discordPayload(a));
    case 'telegram':
      return json(telegramPayload(a, ctx.chatId));
    case 'gotify':
      return json(gotifyPayload(a, ctx.options));
    case 'teams':
      return json(teamsPayload(a));
    case 'pagerduty':
      return json(pagerDutyPayload(a, ctx.routingKey));
  }
}
