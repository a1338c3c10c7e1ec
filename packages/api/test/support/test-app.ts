import {
  type Clock,
  createServices,
  type Logger,
  ManualClock,
  SecretBox,
  type ServiceDeps,
  type ServiceOptions,
  type Services,
  silentLogger,
  type TransportContext,
} from '@certwright/core';
import type { createPgliteStorage } from '@certwright/storage-pg';
import { createMigratedPgliteStorage } from '@certwright/storage-pg/testing';
import { type CertwrightHandler, createHandler, type HandlerOptions } from '../../src/index.js';
import type { ProtocolServers } from '../../src/protocols/servers.js';
import { conformance } from './openapi-conformance.js';

export const TEST_API_KEY = 'test-api-key-0123456789abcdef';
/** The SQL storage with its lifecycle methods (migrate, close, db). */
export type SqlStorage = Awaited<ReturnType<typeof createPgliteStorage>>;

const transport: TransportContext = { remoteAddress: '127.0.0.1' };

export interface TestAppOptions {
  /** Defaults to a ManualClock at 2026-01-01T00:00:00Z shared by storage and services. */
  clock?: Clock;
  logger?: Logger;
  /** Passed to createServices (e.g. revocation listeners). */
  services?: ServiceOptions;
  /** Further service dependencies (notification channels …). */
  deps?: Partial<ServiceDeps>;
  /** Anything else createHandler accepts (extra authenticators, routes, auth none …). */
  handler?: Partial<HandlerOptions>;
}

export interface CallOptions {
  /** Bearer token; default the admin API key. `null` sends no Authorization header. */
  token?: string | null;
  headers?: Record<string, string>;
  /** Sent verbatim instead of JSON-encoding `body` (for malformed-JSON tests). */
  raw?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely, as a client would.
export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface TestApp {
  handler: CertwrightHandler;
  services: Services;
  /** The enrollment protocol servers the handler built (ACME, EST, SCEP). */
  servers: ProtocolServers;
  storage: SqlStorage;
  clock: Clock;
  // biome-ignore lint/suspicious/noExplicitAny: see CallResult.
  call<T = any>(method: string, path: string, body?: unknown, options?: CallOptions): Promise<CallResult<T>>;
  close(): Promise<void>;
}

/**
 * A complete in-process app: in-memory PGlite (migrated), every service, and the REST handler
 * with api-key auth. Tests talk HTTP through `call` (a real Request through the handler) and
 * may inspect state through `services` or `storage`.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const clock = options.clock ?? new ManualClock('2026-01-01T00:00:00Z');
  const logger = options.logger ?? silentLogger;
  const storage = await createMigratedPgliteStorage({
    secretBox: new SecretBox(SecretBox.generateKey()),
    clock,
    logger,
  });
  const services = createServices({ storage, clock, logger, ...options.deps }, options.services);
  const handler = createHandler({
    auth: { type: 'api-key', secret: TEST_API_KEY },
    services,
    logger,
    ...options.handler,
    ...conformance.options(options.handler?.onResponse),
  });
  return {
    handler,
    services,
    servers: handler.servers!,
    storage,
    clock,
    async call(method, path, body, callOptions = {}) {
      const headers = new Headers(callOptions.headers);
      const token = callOptions.token === undefined ? TEST_API_KEY : callOptions.token;
      if (token !== null) headers.set('authorization', `Bearer ${token}`);
      let payload: string | undefined = callOptions.raw;
      if (payload === undefined && body !== undefined) payload = JSON.stringify(body);
      if (payload !== undefined) headers.set('content-type', 'application/json');
      // Every answer is checked against the OpenAPI document; a contradiction fails the test.
      const response = await conformance.call(
        handler,
        new Request(`https://localhost:8443${path}`, { method, headers, body: payload }),
        transport,
      );
      const text = await response.text();
      let parsed: unknown = text;
      if (text !== '' && /json/.test(response.headers.get('content-type') ?? '')) parsed = JSON.parse(text);
      return { status: response.status, headers: response.headers, body: parsed as never };
    },
    close: () => storage.close(),
  };
}
