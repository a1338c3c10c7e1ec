// Typed calls to the certwright REST API from the browser: same origin, the session cookie or
// a development API key (sessionStorage only) as the bearer token. Types come from the OpenAPI
// document generated into @certwright/client (types only; its Node transport is not bundled).
import type { paths } from '@certwright/client';

export type Paths = paths;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type OpOf<P extends keyof paths, M extends Method> = NonNullable<paths[P][M & keyof paths[P]]>;
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : undefined;
type SuccessOf<O> = O extends { responses: infer R }
  ? JsonOf<R[Extract<keyof R, 200 | 201 | 202>]> | (204 extends keyof R ? undefined : never)
  : never;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
type PathParamsOf<O> = O extends { parameters: { path: infer Pp } } ? Pp : never;
type BodyOf<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends Record<M, infer O> ? (O extends undefined | never ? never : P) : never;
}[keyof paths];

export interface CallOptions<O> {
  params?: PathParamsOf<O>;
  query?: QueryOf<O>;
  body?: BodyOf<O>;
  signal?: AbortSignal;
}

export type Response200<P extends keyof paths, M extends Method = 'get'> = SuccessOf<OpOf<P, M>>;

/** An RFC 9457 problem detail as the API answers it. */
export interface Problem {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  code?: string;
  errors?: unknown;
  request_id?: string;
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
    this.name = 'ApiError';
  }
  get status(): number {
    return this.problem.status;
  }
}

const API_KEY = 'certwright.api-key';

/** The development API key: kept in sessionStorage only, gone when the tab closes. */
export const apiKey = {
  get: (): string | null => sessionStorage.getItem(API_KEY),
  set: (key: string) => sessionStorage.setItem(API_KEY, key),
  clear: () => sessionStorage.removeItem(API_KEY),
};

/** The CSRF token the server sets next to the session cookie (docs/auth/sessions.md). */
export function csrfToken(cookies: string = document.cookie): string | null {
  for (const part of cookies.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === '__Host-cw_csrf') return decodeURIComponent(rest.join('='));
  }
  return null;
}

/** Fills `{name}` segments of a path template, encoding each value. */
export function fillPath(template: string, params: Record<string, unknown> = {}): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === null) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(String(value));
  });
}

/** Query string: arrays comma-separated, empty and undefined values left out. */
export function queryString(query: Record<string, unknown> = {}): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Headers every API call carries: the bearer key, or the CSRF token for cookie sessions. */
export function authHeaders(method: string): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
  const key = apiKey.get();
  if (key) headers.authorization = `Bearer ${key}`;
  else if (method !== 'GET' && method !== 'HEAD') {
    const csrf = csrfToken();
    if (csrf) headers['x-csrf-token'] = csrf;
  }
  return headers;
}

export async function problemOf(response: Response): Promise<Problem> {
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) {
    try {
      const body = (await response.json()) as Partial<Problem>;
      return { ...body, status: response.status };
    } catch {
      // fall through: a body that is not JSON after all
    }
  }
  return { status: response.status, title: response.statusText || `HTTP ${response.status}` };
}

/** Raw request for what the typed calls do not cover (text exports, auth routes outside /api). */
export async function request(method: string, url: string, body?: unknown): Promise<Response> {
  const headers = authHeaders(method);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (!response.ok) throw new ApiError(await problemOf(response));
  return response;
}

async function call<P extends keyof paths, M extends Method>(
  method: M,
  path: P,
  options: CallOptions<OpOf<P, M>> = {},
): Promise<SuccessOf<OpOf<P, M>>> {
  const url =
    fillPath(path as string, options.params as Record<string, unknown>) +
    queryString(options.query as Record<string, unknown>);
  const upper = method.toUpperCase();
  const headers = authHeaders(upper);
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: upper,
    headers,
    credentials: 'same-origin',
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!response.ok) throw new ApiError(await problemOf(response));
  if (response.status === 204) return undefined as SuccessOf<OpOf<P, M>>;
  const type = response.headers.get('content-type') ?? '';
  return (type.includes('json') ? await response.json() : await response.text()) as SuccessOf<OpOf<P, M>>;
}

export const api = {
  get: <P extends PathsWith<'get'>>(path: P, options?: CallOptions<OpOf<P, 'get'>>) =>
    call('get', path, options),
  post: <P extends PathsWith<'post'>>(path: P, options?: CallOptions<OpOf<P, 'post'>>) =>
    call('post', path, options),
  put: <P extends PathsWith<'put'>>(path: P, options?: CallOptions<OpOf<P, 'put'>>) =>
    call('put', path, options),
  patch: <P extends PathsWith<'patch'>>(path: P, options?: CallOptions<OpOf<P, 'patch'>>) =>
    call('patch', path, options),
  delete: <P extends PathsWith<'delete'>>(path: P, options?: CallOptions<OpOf<P, 'delete'>>) =>
    call('delete', path, options),
};
