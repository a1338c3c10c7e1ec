import { type Agent, fetch } from 'undici';
import { ClientConfigError, connectionError, type Problem, ProblemError } from './errors.js';
import { operationSpecs } from './generated/operations.js';
import type { OperationSpec } from './operation-spec.js';
import { type ClientOptions, parseBaseUrl } from './options.js';
import { backoffMs, retryAfterSeconds, sleep } from './retry.js';
import { createDispatcher } from './tls.js';
import type {
  OperationId,
  OperationInput,
  OperationMethods,
  OperationOutput,
  PagedOperationId,
  PageItem,
  RequestOptions,
} from './types.js';

export const CLIENT_VERSION = '3.0.0';

/** Every operation of the REST API, by operationId, as generated from the OpenAPI document. */
export const operations: ReadonlyMap<string, OperationSpec> = new Map(
  (operationSpecs as readonly OperationSpec[]).map((spec) => [spec.operationId, spec]),
);

/** Loose input, for callers that build it at run time (the CLI, the MCP server). */
export interface RawInput {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
}

/** A streamed answer: read `body` to the end, or cancel it. */
export interface Download {
  readonly contentType: string;
  /** From Content-Length, when the server sent one. */
  readonly contentLength?: number;
  readonly body: ReadableStream<Uint8Array>;
}

interface Page<T> {
  data: T[];
  total: number;
  page: number;
  per_page: number;
}

export interface CertwrightClientCore {
  readonly baseUrl: URL;
  /** Calls an operation by operationId with typed input and output. */
  call<K extends OperationId>(
    operationId: K,
    input?: OperationInput<K>,
    options?: RequestOptions,
  ): Promise<OperationOutput<K>>;
  /** Calls an operation with input checked only by the server. */
  callRaw(operationId: string, input?: RawInput, options?: RequestOptions): Promise<unknown>;
  /** Every item of a list operation, fetching page after page as the loop asks for more. */
  paginate<K extends PagedOperationId>(
    operationId: K,
    input?: OperationInput<K>,
    options?: RequestOptions,
  ): AsyncIterableIterator<PageItem<K>>;
  /** The pages themselves (`{data,total,page,per_page}`), first to last. */
  pages<K extends PagedOperationId>(
    operationId: K,
    input?: OperationInput<K>,
    options?: RequestOptions,
  ): AsyncIterableIterator<OperationOutput<K>>;
  /** The answer as a stream, for large exports (audit NDJSON, PKCS#12); errors are thrown as by `callRaw`. */
  download(operationId: string, input?: RawInput, options?: RequestOptions): Promise<Download>;
  /** Closes the pooled connections. */
  close(): Promise<void>;
}

export type CertwrightClient = CertwrightClientCore & OperationMethods;

/**
 * A client of the certwright REST API. Refuses an `http://` base URL; retries 429 and 503
 * answers after their Retry-After; throws `ProblemError` for error answers and
 * `ConnectionError` when no answer came.
 */
export function createClient(options: ClientOptions): CertwrightClient {
  const baseUrl = parseBaseUrl(options.baseUrl);
  const dispatcher: Agent = createDispatcher(options);
  const maxRetries = options.maxRetries ?? 3;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const userAgent = [options.userAgent, `certwright-client/${CLIENT_VERSION}`].filter(Boolean).join(' ');
  const prefix = baseUrl.pathname.replace(/\/+$/, '');

  const urlFor = (spec: OperationSpec, input: RawInput): URL => {
    const path = spec.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = input.path?.[name];
      if (value === undefined || value === null || value === '') {
        throw new ClientConfigError(`${spec.operationId}: the path parameter ${name} is required`);
      }
      return encodeURIComponent(String(value));
    });
    const url = new URL(baseUrl);
    url.pathname = prefix + path;
    for (const [key, value] of Object.entries(input.query ?? {})) {
      if (value === undefined || value === null) continue;
      // Lists travel comma-separated, as the list routes read them.
      url.searchParams.set(key, Array.isArray(value) ? value.join(',') : String(value));
    }
    return url;
  };

  /** Sends with retries; the successful response, body unread. */
  const send = async (operationId: string, input: RawInput = {}, request: RequestOptions = {}) => {
    const spec = operations.get(operationId);
    if (!spec) throw new ClientConfigError(`unknown operation ${operationId}`);
    const url = urlFor(spec, input);
    const headers: Record<string, string> = {
      accept: 'application/json, application/problem+json;q=0.9, */*;q=0.5',
      'user-agent': userAgent,
    };
    if (options.apiKey && !spec.public) headers.authorization = `Bearer ${options.apiKey}`;
    let body: string | undefined;
    if (input.body !== undefined) {
      body = JSON.stringify(input.body);
      headers['content-type'] = 'application/json';
    } else if (spec.body?.required) {
      throw new ClientConfigError(`${operationId}: a JSON body is required`);
    }
    for (let attempt = 0; ; attempt++) {
      // The time limit covers the wait for the answer's head; a long body (an audit export)
      // then streams under undici's idle timeout between chunks.
      const deadline = new AbortController();
      const timer = setTimeout(
        () => deadline.abort(new DOMException('timed out', 'TimeoutError')),
        timeoutMs,
      );
      const signals = [deadline.signal, ...(request.signal ? [request.signal] : [])];
      let response: Awaited<ReturnType<typeof fetch>>;
      try {
        response = await fetch(url, {
          method: spec.method,
          headers,
          body,
          dispatcher,
          signal: AbortSignal.any(signals),
        });
      } catch (error) {
        throw connectionError(error, url.origin);
      } finally {
        clearTimeout(timer);
      }
      if (response.ok) return response;
      const retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
      // 429 was refused before anything ran. A 503 is retried for idempotent methods, and for a
      // POST only when the server itself asks to come back (Retry-After): a proxy's bare 503 may
      // follow work the server did.
      const retryable =
        response.status === 429 ||
        (response.status === 503 && (spec.method !== 'POST' || retryAfter !== undefined));
      const waitMs = retryAfter !== undefined ? retryAfter * 1000 : backoffMs(attempt);
      if (retryable && attempt < maxRetries && waitMs <= maxRetryDelayMs) {
        await response.body?.cancel();
        await sleep(waitMs, request.signal);
        continue;
      }
      throw new ProblemError(operationId, await problemOf(response), retryAfter);
    }
  };

  const callRaw = async (operationId: string, input?: RawInput, request?: RequestOptions) =>
    decode(await send(operationId, input, request));

  const download = async (
    operationId: string,
    input?: RawInput,
    request?: RequestOptions,
  ): Promise<Download> => {
    const response = await send(operationId, input, request);
    const length = response.headers.get('content-length');
    return {
      contentType: response.headers.get('content-type') ?? '',
      ...(length !== null && /^\d+$/.test(length) ? { contentLength: Number(length) } : {}),
      body: (response.body ??
        new ReadableStream<Uint8Array>({ start: (c) => c.close() })) as ReadableStream<Uint8Array>,
    };
  };

  async function* pages(operationId: string, input: RawInput = {}, request: RequestOptions = {}) {
    const query = { ...(input.query ?? {}) };
    let page = Number(query.page ?? 1);
    for (;;) {
      const answer = (await callRaw(
        operationId,
        { ...input, query: { ...query, page } },
        request,
      )) as Page<unknown>;
      yield answer;
      if (answer.data.length === 0 || answer.page * answer.per_page >= answer.total) return;
      page = answer.page + 1;
    }
  }

  async function* paginate(operationId: string, input: RawInput = {}, request: RequestOptions = {}) {
    for await (const page of pages(operationId, input, request)) yield* page.data;
  }

  const core = {
    baseUrl,
    call: (operationId: string, input?: RawInput, request?: RequestOptions) =>
      callRaw(operationId, input, request),
    callRaw,
    download,
    pages,
    paginate,
    close: () => dispatcher.close(),
  };
  const methods = Object.fromEntries(
    [...operations.keys()].map((id) => [
      id,
      (input?: RawInput, request?: RequestOptions) => callRaw(id, input, request),
    ]),
  );
  return Object.assign(methods, core) as unknown as CertwrightClient;
}

async function decode(response: Awaited<ReturnType<typeof fetch>>): Promise<unknown> {
  if (response.status === 204) return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (/^application\/(.+\+)?json\b/i.test(type)) {
    const text = await response.text();
    return text === '' ? undefined : JSON.parse(text);
  }
  return { contentType: type, bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** The problem document of an error answer; a bare one when a proxy answered something else. */
async function problemOf(response: Awaited<ReturnType<typeof fetch>>): Promise<Problem> {
  const text = await response.text().catch(() => '');
  const type = response.headers.get('content-type') ?? '';
  if (/json/i.test(type)) {
    try {
      const parsed = JSON.parse(text) as Partial<Problem>;
      if (parsed && typeof parsed === 'object' && typeof parsed.status === 'number') {
        return {
          type: parsed.type ?? 'about:blank',
          title: parsed.title ?? response.statusText,
          status: parsed.status,
          detail: parsed.detail ?? '',
          error: parsed.error ?? codeFor(response.status),
          request_id: parsed.request_id ?? response.headers.get('x-request-id') ?? '',
          ...(parsed.reason ? { reason: parsed.reason } : {}),
          ...(parsed.errors ? { errors: parsed.errors } : {}),
        };
      }
    } catch {
      // Not JSON after all: described below from the status alone.
    }
  }
  return {
    type: 'about:blank',
    title: response.statusText || `HTTP ${response.status}`,
    status: response.status,
    detail: text.slice(0, 200).replace(/\s+/g, ' ').trim(),
    error: codeFor(response.status),
    request_id: response.headers.get('x-request-id') ?? '',
  };
}

function codeFor(status: number): string {
  const codes: Record<number, string> = {
    400: 'bad_request',
    401: 'unauthorized',
    403: 'forbidden',
    404: 'not_found',
    405: 'method_not_allowed',
    409: 'conflict',
    413: 'payload_too_large',
    415: 'unsupported_media_type',
    429: 'too_many_requests',
    500: 'internal_error',
    503: 'service_unavailable',
  };
  return codes[status] ?? `http_${status}`;
}
