import { isCertwrightError, publicMessage } from '../../errors.js';
import type { OutboundClient } from '../../net/client.js';
import type { AlertTemplateData } from '../template/alert.js';
import { prepareWebhookRequest, type WebhookTarget } from './request.js';

/** Each delivery attempt: connect, send and read the answer within this. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Response bytes read; a receiver that streams forever is cut here. */
export const WEBHOOK_RESPONSE_CAP_BYTES = 64 * 1024;
/** Response text kept in a result (and in a test answer). */
export const WEBHOOK_EXCERPT_BYTES = 512;
/** A `Retry-After` longer than this is read as this. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

/** What one delivery did. */
export interface WebhookDeliveryResult {
  delivered: boolean;
  /** The target's HTTP status; null when no answer came (or nothing was sent). */
  status_code: number | null;
  duration_ms: number;
  /** The first bytes of the answer, as text. */
  response_excerpt: string;
  /** Why it failed (safe to show); null when delivered. */
  error: string | null;
  /** What the failure means for the operator (a 400: the payload does not suit the service …). */
  meaning: string | null;
  /** Whether trying again later may succeed (5xx, 429, 408, transport errors). */
  retryable: boolean;
  /** The target asked to wait this long (`Retry-After`). */
  retry_after_ms?: number;
}

/** 001's meanings of a refusal, and the other 4xx an operator meets. */
export function statusMeaning(status: number): string {
  if (status === 400) return 'the payload format does not suit the target service';
  if (status === 401 || status === 403) {
    return 'the credentials are wrong or expired, or the target restricts source IP addresses';
  }
  if (status === 404 || status === 410)
    return 'the URL does not exist on the target (wrong path, or the webhook was removed)';
  if (status === 413) return 'the payload is larger than the target accepts';
  if (status === 429)
    return 'the target is rate limiting; the delivery is retried after the time it asked for';
  if (status >= 500) return 'the target failed; the delivery is retried with backoff';
  return 'the target refused the request';
}

/** `Retry-After` (RFC 9110 §10.2.3): seconds or an HTTP date. */
export function retryAfterMs(value: string | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  let ms: number | undefined;
  if (/^\d{1,10}$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isFinite(at)) ms = Math.max(0, at - now.getTime());
  }
  return ms === undefined ? undefined : Math.min(ms, MAX_RETRY_AFTER_MS);
}

function excerpt(body: Uint8Array): string {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(body.subarray(0, WEBHOOK_EXCERPT_BYTES));
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters stay out of what an operator reads
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
}

export interface WebhookSenderOptions {
  /**
   * The guarded client of this delivery: built per delivery, so the operator's allowlist as it
   * is now applies and the URL's host is resolved, checked and connected to in one step.
   */
  client: () => OutboundClient | Promise<OutboundClient>;
  /** The clock's time (Retry-After dates). */
  now: () => Date;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Told of every result (metrics); must not throw. */
  onResult?: (service: WebhookTarget['service'], result: WebhookDeliveryResult) => void;
}

/**
 * Sends one alert to one webhook. The live pipeline and the test action both call
 * {@link WebhookSender.send}: same templates, same headers, same guard, same classification.
 */
export class WebhookSender {
  constructor(private readonly options: WebhookSenderOptions) {}

  async send(
    target: WebhookTarget,
    alert: AlertTemplateData,
    idempotencyKey: string,
  ): Promise<WebhookDeliveryResult> {
    const result = await this.#send(target, alert, idempotencyKey);
    try {
      this.options.onResult?.(target.service, result);
    } catch {
      // A metrics hook never changes a delivery's outcome.
    }
    return result;
  }

  async #send(
    target: WebhookTarget,
    alert: AlertTemplateData,
    idempotencyKey: string,
  ): Promise<WebhookDeliveryResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failed = (error: string, meaning: string, retryable: boolean): WebhookDeliveryResult => ({
      delivered: false,
      status_code: null,
      duration_ms: elapsed(),
      response_excerpt: '',
      error,
      meaning,
      retryable,
    });
    let prepared: ReturnType<typeof prepareWebhookRequest>;
    try {
      prepared = prepareWebhookRequest(target, alert, idempotencyKey);
    } catch (error) {
      return failed(publicMessage(error), 'the webhook configuration cannot produce a request', false);
    }
    let response: Awaited<ReturnType<OutboundClient['request']>>;
    try {
      const client = await this.options.client();
      response = await client.request(prepared.url, {
        method: prepared.method,
        headers: prepared.headers,
        ...(prepared.body !== undefined ? { body: prepared.body } : {}),
        timeoutMs: this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
        totalTimeoutMs: this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
        maxResponseBytes: this.options.maxResponseBytes ?? WEBHOOK_RESPONSE_CAP_BYTES,
        onTooLarge: 'truncate',
        redirect: 'error',
        field: 'url',
      });
    } catch (error) {
      const reason = isCertwrightError(error) ? error.reason : undefined;
      switch (reason) {
        case 'address_refused':
          return failed(
            publicMessage(error),
            'the URL is not an allowed destination (see the private range allowlist)',
            false,
          );
        case 'invalid_input':
          return failed(publicMessage(error), 'the webhook configuration cannot produce a request', false);
        case 'redirect_refused':
          return failed(
            publicMessage(error),
            'the target redirects; webhooks do not follow redirects, configure the final URL',
            false,
          );
        default:
          return failed(
            publicMessage(error),
            'the target could not be reached; the delivery is retried with backoff',
            true,
          );
      }
    }
    const status = response.status;
    const base = {
      status_code: status,
      duration_ms: elapsed(),
      response_excerpt: excerpt(response.body),
    };
    if (status >= 200 && status < 300) {
      return { ...base, delivered: true, error: null, meaning: null, retryable: false };
    }
    const retryable = status >= 500 || status === 429 || status === 408;
    const wait = retryable ? retryAfterMs(response.headers['retry-after'], this.options.now()) : undefined;
    return {
      ...base,
      delivered: false,
      error: `the target answered HTTP ${status}`,
      meaning: statusMeaning(status),
      retryable,
      ...(wait !== undefined ? { retry_after_ms: wait } : {}),
    };
  }
}
