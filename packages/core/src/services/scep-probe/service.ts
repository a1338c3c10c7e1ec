import { z } from 'zod';
import type { ScepProbe, ScepProbeResult } from '../../domain/scep-probe.js';
import { type FailureReason, fail, isCertwrightError, publicMessage, validationError } from '../../errors.js';
import { parseAllowlist } from '../../net/allowlist.js';
import { createOutboundClient, type OutboundClient } from '../../net/client.js';
import type { TrustAnchors } from '../../net/connect.js';
import { type OutboundResponse, parseOutboundUrl } from '../../net/http-request.js';
import type { Actor, ServiceDeps } from '../context.js';
import { parseInput } from '../input.js';
import { type CertificateSummary, chooseCa, readCaCertificates } from './ca-certificates.js';
import { capabilityFlags, NO_CAPABILITIES, parseCapabilities } from './capabilities.js';

/** Limits of one probe (docs/protocols/scep-probe.md). */
export const SCEP_PROBE_TIMEOUT_MS = 30_000;
export const SCEP_PROBE_MAX_BODY_BYTES = 1024 * 1024;
export const SCEP_PROBE_HISTORY_DEFAULT = 20;
export const SCEP_PROBE_HISTORY_MAX = 200;
export const SCEP_PROBE_MAX_CONCURRENT = 8;
const MAX_REDIRECTS = 5;
const MAX_URL_LENGTH = 2048;
const MAX_ERROR_LENGTH = 2000;
const DAY_MS = 86_400_000;
/** Longest subject or issuer kept; real names are under 1 KiB, a certificate may hold 64 KiB. */
const MAX_NAME_LENGTH = 4096;
const MAX_KEY_ALGORITHM_LENGTH = 128;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROL = /[\u0000-\u001f\u007f]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text a server chose, made storable and readable: control characters (NUL, which PostgreSQL
 * text cannot hold, line breaks that would forge log lines) become `\xNN`, lone surrogates
 * U+FFFD, and the result is cut at `max` characters.
 */
export function printable(text: string, max: number): string {
  return text
    .replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
    .slice(0, max)
    .replace(LONE_SURROGATE, '\uFFFD');
}

export interface ScepProbeOptions {
  /**
   * Private ranges (RFC 1918, RFC 6598, unique local) the probe may reach, as for
   * `parseAllowlist`; default none. Loopback, link-local, metadata and the other refused
   * categories stay refused whatever this lists (docs/operations/outbound-connections.md).
   * The server reads it from `SVC_SCEP_PROBE_ALLOWED_RANGES`.
   */
  allowedRanges?: string | readonly string[];
  /**
   * The guarded client every probe request goes through, instead of one built from
   * `allowedRanges` (which never admits loopback). A client made with `loopback: 'when-listed'`
   * and a loopback allowlist entry is how tests reach a server on 127.0.0.1: a code-level
   * choice the server's configuration cannot make.
   */
  client?: OutboundClient;
  /** The whole probe — both requests, lookups and redirects — within this; default 30 s. */
  timeoutMs?: number;
  /** Each answer's body at most this many bytes; default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Probes one process runs at once; one more is refused with `rate_limited` (429) rather than
   * queued, so callers cannot pile up sockets and 30-second waits. Default 8.
   */
  maxConcurrent?: number;
  /** Trust for https targets instead of the system roots. */
  tls?: { ca?: TrustAnchors };
}

export const scepProbeInputSchema = z.object({
  url: z
    .string()
    .trim()
    .min(1)
    .max(MAX_URL_LENGTH)
    .describe('the SCEP endpoint, http or https, e.g. https://scep.example.com/scep; no credentials'),
});
export type ScepProbeInput = z.input<typeof scepProbeInputSchema>;

export const scepProbeHistorySchema = z.object({
  limit: z.coerce
    .number<number | string>({ error: 'must be an integer' })
    .int('must be an integer')
    .optional()
    .describe(
      `results returned, newest first; default ${SCEP_PROBE_HISTORY_DEFAULT}, clamped to 1–${SCEP_PROBE_HISTORY_MAX}`,
    )
    .transform((n) =>
      n === undefined ? SCEP_PROBE_HISTORY_DEFAULT : Math.min(SCEP_PROBE_HISTORY_MAX, Math.max(1, n)),
    ),
});
export type ScepProbeHistoryQuery = z.input<typeof scepProbeHistorySchema>;

/**
 * Failures after which the second request is not sent: it would go to the same host and port
 * and meet the same refusal. An HTTP error status or an oversized answer of GetCACaps does not
 * stop GetCACert (servers without GetCACaps exist, RFC 8894 §3.5.1).
 */
const STOPS_THE_PROBE: ReadonlySet<FailureReason> = new Set([
  'invalid_input',
  'address_refused',
  'dns_failed',
  'connection_failed',
  'tls_failed',
  'timed_out',
  'redirect_refused',
]);

type Outcome = { response: OutboundResponse } | { failure: unknown };

/**
 * Probes SCEP servers (RFC 8894): GetCACaps and GetCACert, both GET, through the outbound
 * address guard, and keeps the results. It never sends a PKIOperation. A target's failure —
 * refused destination, no answer, an answer that does not parse — is part of the result
 * (`error`), not an exception; only input that is not an http(s) URL is refused (400).
 */
export class ScepProbeService {
  readonly #client: OutboundClient;
  readonly #timeoutMs: number;
  readonly #maxBodyBytes: number;
  readonly #maxConcurrent: number;
  #running = 0;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly options: ScepProbeOptions = {},
  ) {
    this.#client =
      options.client ??
      createOutboundClient({ allowlist: parseAllowlist(options.allowedRanges ?? '', 'allowedRanges') });
    this.#timeoutMs = options.timeoutMs ?? SCEP_PROBE_TIMEOUT_MS;
    this.#maxBodyBytes = options.maxBodyBytes ?? SCEP_PROBE_MAX_BODY_BYTES;
    this.#maxConcurrent = options.maxConcurrent ?? SCEP_PROBE_MAX_CONCURRENT;
  }

  /** Probes `input.url`, stores the result and returns it. */
  async probe(actor: Actor, input: ScepProbeInput): Promise<ScepProbeResult> {
    const { url: text } = parseInput(scepProbeInputSchema, input);
    const url = parseOutboundUrl(text, 'url');
    url.hash = '';
    if (url.href.length > MAX_URL_LENGTH) {
      throw validationError([
        { field: 'url', message: `is longer than ${MAX_URL_LENGTH} characters once normalized` },
      ]);
    }
    if (this.#running >= this.#maxConcurrent) {
      throw fail(
        'rate_limited',
        `${this.#maxConcurrent} SCEP probes are already running; try again when one has finished`,
      );
    }
    this.#running++;
    try {
      return await this.#run(actor, url);
    } finally {
      this.#running--;
    }
  }

  async #run(actor: Actor, url: URL): Promise<ScepProbeResult> {
    const { clock, logger, storage } = this.deps;
    const started = clock.now();
    const deadline = started.getTime() + this.#timeoutMs;
    const errors: string[] = [];
    let reachable = false;
    let capabilities: string[] = [];
    let chain: CertificateSummary[] = [];
    let ca: CertificateSummary | undefined;

    const caps = await this.#get(url, 'GetCACaps', deadline);
    let goOn = true;
    if ('response' in caps) {
      reachable = true;
      if (caps.response.status === 200) capabilities = parseCapabilities(caps.response.body);
      else errors.push(`GetCACaps: HTTP ${caps.response.status}`);
    } else {
      reachable = reasonOf(caps.failure) === 'response_too_large';
      goOn = !STOPS_THE_PROBE.has(reasonOf(caps.failure) ?? 'internal');
      errors.push(
        goOn ? `GetCACaps: ${this.#describe(caps.failure, url)}` : this.#describe(caps.failure, url),
      );
    }

    if (goOn) {
      const cert = await this.#get(url, 'GetCACert', deadline);
      if ('response' in cert) {
        reachable = true;
        if (cert.response.status !== 200) {
          errors.push(`GetCACert: HTTP ${cert.response.status}`);
        } else {
          try {
            chain = readCaCertificates(cert.response.body);
            ca = chooseCa(chain);
          } catch (error) {
            errors.push(`GetCACert: ${this.#describe(error, url)}`);
          }
        }
      } else {
        reachable ||= reasonOf(cert.failure) === 'response_too_large';
        errors.push(`GetCACert: ${this.#describe(cert.failure, url)}`);
      }
    }

    const finished = clock.now();
    const record: Omit<ScepProbe, 'id'> = {
      url: url.href,
      reachable,
      capabilities,
      ...(capabilities.length > 0 ? capabilityFlags(capabilities) : NO_CAPABILITIES),
      ca_subject: ca ? printable(ca.subject, MAX_NAME_LENGTH) : null,
      ca_issuer: ca ? printable(ca.issuer, MAX_NAME_LENGTH) : null,
      ca_not_before: ca?.notBefore ?? null,
      ca_not_after: ca?.notAfter ?? null,
      key_algorithm: ca ? printable(ca.keyAlgorithm, MAX_KEY_ALGORITHM_LENGTH) : null,
      chain_length: chain.length,
      probed_at: started,
      duration_ms: Math.max(0, finished.getTime() - started.getTime()),
      error: errors.length > 0 ? printable(errors.join('; '), MAX_ERROR_LENGTH) : null,
    };
    const stored = await storage.scepProbes.create(record);
    logger.info(
      {
        actor: actor.id,
        actor_type: actor.type,
        probe_id: stored.id,
        url: stored.url,
        reachable,
        error: stored.error,
      },
      'SCEP probe',
    );
    return scepProbeResult(stored, finished);
  }

  /** The newest results first, `limit` of them (default 20, clamped to 1–200). */
  async recent(query: ScepProbeHistoryQuery = {}): Promise<ScepProbeResult[]> {
    const { limit } = parseInput(scepProbeHistorySchema, query);
    const now = this.deps.clock.now();
    return (await this.deps.storage.scepProbes.recent(limit)).map((p) => scepProbeResult(p, now));
  }

  async #get(base: URL, operation: 'GetCACaps' | 'GetCACert', deadline: number): Promise<Outcome> {
    const remaining = deadline - this.deps.clock.now().getTime();
    if (remaining <= 0) {
      return { failure: fail('timed_out', `no complete answer within ${this.#timeoutMs} ms`) };
    }
    const url = new URL(base);
    url.searchParams.set('operation', operation);
    try {
      const response = await this.#client.request(url, {
        method: 'GET',
        headers: { accept: '*/*' },
        timeoutMs: remaining,
        totalTimeoutMs: remaining,
        maxResponseBytes: this.#maxBodyBytes,
        redirect: 'follow',
        maxRedirects: MAX_REDIRECTS,
        field: 'url',
        ...(this.options.tls ? { tls: this.options.tls } : {}),
      });
      return { response };
    } catch (failure) {
      return { failure };
    }
  }

  /** The text a user sees for a failure; anything but our own typed errors is logged, not shown. */
  #describe(error: unknown, url: URL): string {
    if (isCertwrightError(error)) return publicMessage(error, MAX_ERROR_LENGTH);
    this.deps.logger.error({ err: error, url: url.href }, 'SCEP probe failed unexpectedly');
    return publicMessage(error);
  }
}

const reasonOf = (error: unknown): FailureReason | undefined =>
  isCertwrightError(error) ? error.reason : undefined;

/** A stored probe as reported at `now`: expiry recomputed, never stored. */
export function scepProbeResult(probe: ScepProbe, now: Date): ScepProbeResult {
  const notAfter = probe.ca_not_after;
  return {
    ...probe,
    days_to_expiry: notAfter ? Math.floor((notAfter.getTime() - now.getTime()) / DAY_MS) : null,
    expired: notAfter ? notAfter.getTime() < now.getTime() : null,
  };
}
