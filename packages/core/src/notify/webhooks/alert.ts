import type { ManagedCertificate } from '../../domain/certificate.js';
import type { NotificationEvent, NotificationType } from '../../domain/notification.js';
import type { AlertTemplateData } from '../template/alert.js';

const DAY = 86_400_000;

/** Days left at or below which an expiry warning is `critical` rather than `warning`. */
export const CRITICAL_DAYS_LEFT = 7;

const LEVELS: Record<Exclude<NotificationType, 'ExpirationWarning'>, string> = {
  RenewalSuccess: 'info',
  DeploymentSuccess: 'info',
  RenewalFailure: 'critical',
  DeploymentFailure: 'critical',
  EndpointHealth: 'critical',
  PolicyViolation: 'warning',
  Revocation: 'warning',
};

/** Go's `time.Duration.String()` for whole seconds: `0s`, `45s`, `5m0s`, `2h30m0s`. */
export function goDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

export interface AlertContext {
  /** The certificate the event is about, when it names one that still exists. */
  certificate?: Pick<ManagedCertificate, 'id' | 'name' | 'common_name' | 'expires_at'> | null;
  /** When the alert is sent. */
  now: Date;
  /** URL of this certwright instance (`.Instance`). */
  instance?: string;
  /** Name of the node sending (`.Node`). */
  node?: string;
}

/**
 * How a certificate notification fills the alert variables (docs/notifications/webhooks.md):
 * `.Value` is the days left until the certificate expires, counted when the event was raised
 * (so every retry sends the same value), `.Threshold` the warning threshold the event crossed,
 * `.StartTime` when the event was raised and `.Duration` how long ago that was.
 */
export function alertFromEvent(event: NotificationEvent, context: AlertContext): AlertTemplateData {
  const cert = context.certificate ?? null;
  const daysLeft = cert?.expires_at
    ? Math.floor((cert.expires_at.getTime() - event.created_at.getTime()) / DAY)
    : 0;
  const threshold = /Alert threshold: (-?\d+) day/.exec(event.message);
  const level =
    event.type === 'ExpirationWarning'
      ? daysLeft <= CRITICAL_DAYS_LEFT
        ? 'critical'
        : 'warning'
      : LEVELS[event.type];
  return {
    ID: event.id,
    Level: level,
    Type: event.type,
    ResourceName: cert?.name ?? '',
    ResourceID: event.certificate_id ?? '',
    Node: context.node ?? '',
    Instance: context.instance ?? '',
    Message: event.subject || event.message.split('\n')[0] || event.type,
    Value: daysLeft,
    Threshold: threshold ? Number(threshold[1]) : 0,
    Duration: goDuration(context.now.getTime() - event.created_at.getTime()),
    Timestamp: context.now.toISOString(),
    StartTime: event.created_at.toISOString(),
  };
}

/** The alert a test delivery sends: every variable filled, a quote and an emoji included. */
export function sampleAlert(
  now: Date,
  context: { instance?: string; node?: string } = {},
): AlertTemplateData {
  const started = new Date(now.getTime() - 2 * 3_600_000);
  return {
    ID: 'test-alert',
    Level: 'warning',
    Type: 'ExpirationWarning',
    ResourceName: 'www.example.com',
    ResourceID: 'mc-test',
    Node: context.node ?? 'certwright',
    Instance: context.instance ?? '',
    Message: 'Test alert from certwright: certificate "www.example.com" expires in 14 day(s) 🔐',
    Value: 14,
    Threshold: 30,
    Duration: goDuration(now.getTime() - started.getTime()),
    Timestamp: now.toISOString(),
    StartTime: started.toISOString(),
  };
}
