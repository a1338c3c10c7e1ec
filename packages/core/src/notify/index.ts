export { type ChannelOutcome, type NotificationChannel, NotificationChannelRegistry } from './channel.js';
export {
  type DeliveryJob,
  enqueueDeliveryAfterCommit,
  NOTIFICATION_DELIVERY_TOPIC,
} from './immediate-delivery.js';
export {
  afterFailedAttempt,
  RETRY_BACKOFF_CAP_MS,
  RETRY_DEAD_AT_COUNT,
  retryDelayMs,
} from './retry-schedule.js';
export * from './template/index.js';
export * from './webhooks/index.js';
