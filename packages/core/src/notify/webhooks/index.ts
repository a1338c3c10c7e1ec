export { alertFromEvent, CRITICAL_DAYS_LEFT, goDuration, sampleAlert } from './alert.js';
export {
  WEBHOOK_CHANNEL_PREFIX,
  WebhookChannel,
  type WebhookChannelDeps,
  webhookChannelName,
} from './channel.js';
export { type BuiltPayload, builtInPayload, dedupKey, isJsonKind } from './kinds.js';
export {
  checkHeaders,
  MAX_HEADERS,
  type PreparedRequest,
  prepareWebhookRequest,
  type WebhookTarget,
} from './request.js';
export {
  MAX_RETRY_AFTER_MS,
  retryAfterMs,
  statusMeaning,
  WEBHOOK_EXCERPT_BYTES,
  WEBHOOK_RESPONSE_CAP_BYTES,
  WEBHOOK_TIMEOUT_MS,
  type WebhookDeliveryResult,
  WebhookSender,
  type WebhookSenderOptions,
} from './sender.js';
