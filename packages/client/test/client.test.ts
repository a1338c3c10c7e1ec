import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientConfigError,
  ConnectionError,
  clientOptionsFromEnv,
  createClient,
  INSECURE_WARNING,
  InsecureBaseUrlError,
  operations,
  ProblemError,
} from '../src/index.js';
import { API_KEY, startStubServer, startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.stop());

const client = (extra: Record<string, unknown> = {}) =>
  createClient({ baseUrl: server.url, apiKey: API_KEY, caBundlePath: server.caPath, ...extra });

const base = {
  owner_id: 'own-default',
  team_id: 'team-default',
  renewal_policy_id: 'rp-default',
  issuer_id: 'iss-local',
};

describe('transport and trust', () => {
  it('refuses an http:// base URL at construction, naming the upgrade guide', () => {
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:8443' })).toThrow(InsecureBaseUrlError);
    expect(() => createClient({ baseUrl: 'HTTP://example.test' })).toThrow(
      /docs\/clients\/https-upgrade\.md/,
    );
    expect(() => createClient({ baseUrl: 'ftp://example.test' })).toThrow(ClientConfigError);
    expect(() => createClient({ baseUrl: 'not a url' })).toThrow(/not a valid URL/);
  });

  it('trusts the server through SVC_SERVER_CA_BUNDLE_PATH', async () => {
    const options = clientOptionsFromEnv({
      SVC_SERVER_URL: server.url,
      SVC_API_KEY: API_KEY,
      SVC_SERVER_CA_BUNDLE_PATH: server.caPath,
    });
    const c = createClient(options as { baseUrl: string });
    try {
      expect(await c.getAuthInfo()).toEqual({ auth_type: 'api-key' });
    } finally {
      await c.close();
    }
  });

  it('refuses a server certificate its CA bundle did not issue, as an untrusted-TLS connection error', async () => {
    const c = createClient({ baseUrl: server.url, apiKey: API_KEY, caBundlePath: server.otherCaPath });
    try {
      const error = await c.getVersion().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as ConnectionError).kind).toBe('tls-untrusted');
      expect((error as ConnectionError).message).toMatch(/SVC_SERVER_CA_BUNDLE_PATH/);
    } finally {
      await c.close();
    }
  });

  it('skips verification only when asked, and warns when it does', async () => {
    const warnings: string[] = [];
    const c = createClient({
      baseUrl: server.url,
      apiKey: API_KEY,
      insecureSkipVerify: true,
      warn: (m) => warnings.push(m),
    });
    try {
      expect(warnings).toEqual([INSECURE_WARNING]);
      expect((await c.getVersion()).version).toEqual(expect.any(String));
    } finally {
      await c.close();
    }
  });

  it('reads the key from SVC_API_KEY_FILE and refuses both key variables or a bad boolean', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cw-client-'));
    writeFileSync(join(dir, 'key'), `${API_KEY}\n`);
    expect(clientOptionsFromEnv({ SVC_API_KEY_FILE: join(dir, 'key') }).apiKey).toBe(API_KEY);
    expect(() => clientOptionsFromEnv({ SVC_API_KEY: 'a', SVC_API_KEY_FILE: join(dir, 'key') })).toThrow(
      /not both/,
    );
    expect(() => clientOptionsFromEnv({ SVC_API_KEY_FILE: join(dir, 'missing') })).toThrow(/ENOENT/);
    expect(() => clientOptionsFromEnv({ SVC_SERVER_TLS_INSECURE_SKIP_VERIFY: 'maybe' })).toThrow(
      /SVC_SERVER_TLS_INSECURE_SKIP_VERIFY must be true or false/,
    );
  });

  it('reports a server that is down as unreachable', async () => {
    const stub = await startStubServer(() => ({ status: 200 }));
    await stub.close();
    const c = createClient({ baseUrl: stub.url, caBundlePath: stub.caPath, maxRetries: 0 });
    try {
      const error = await c.getVersion().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as ConnectionError).kind).toBe('unreachable');
      expect((error as ConnectionError).code).toBe('ECONNREFUSED');
    } finally {
      await c.close();
    }
  });

  it('gives up on a server that does not answer within the time limit', async () => {
    const stub = await startStubServer(() => null);
    const c = createClient({ baseUrl: stub.url, caBundlePath: stub.caPath, timeoutMs: 1_000 });
    try {
      const error = await c.getVersion().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as ConnectionError).kind).toBe('timeout');
      // Never sent twice. The time limit covers the TLS handshake too, so on a loaded machine it
      // can pass before the one request arrives: at most one, not exactly one.
      expect(stub.requests.length).toBeLessThanOrEqual(1);
    } finally {
      await c.close().catch(() => {});
      await stub.close();
    }
  });
});

describe('certificates through the typed client', () => {
  it('creates, gets, lists and paginates', async () => {
    const c = client();
    try {
      const tag = `page-${Date.now()}`;
      const created = [];
      for (let i = 0; i < 5; i++) {
        created.push(
          await c.createCertificate({
            body: { ...base, name: `${tag}-${i}`, common_name: `${tag}-${i}.example.test`, tags: [tag] },
          }),
        );
      }
      const first = created[0]!;
      expect(first).toMatchObject({ name: `${tag}-0`, common_name: `${tag}-0.example.test` });
      expect(await c.getCertificate({ path: { id: first.id } })).toMatchObject({ id: first.id });

      const page = await c.listCertificates({ query: { search: tag, per_page: 2 } });
      expect(page).toMatchObject({ total: 5, page: 1, per_page: 2 });
      expect(page.data).toHaveLength(2);

      const pages = [];
      for await (const p of c.pages('listCertificates', { query: { search: tag, per_page: 2 } }))
        pages.push(p);
      expect(pages.map((p) => p.data.length)).toEqual([2, 2, 1]);

      const ids = [];
      for await (const cert of c.paginate('listCertificates', { query: { search: tag, per_page: 2 } })) {
        ids.push(cert.id);
      }
      expect(ids.sort()).toEqual(created.map((x) => x.id).sort());

      const pending = await c.listCertificates({
        query: { search: tag, status: ['Pending', 'Active', 'Failed', 'RenewalInProgress'] },
      });
      expect(pending.total).toBe(5);
    } finally {
      await c.close();
    }
  });

  it('answers every list and read-only operation without path parameters (each route family)', async () => {
    const c = client();
    try {
      const reads = [...operations.values()].filter(
        (op) =>
          op.method === 'GET' &&
          op.pathParams.length === 0 &&
          !op.queryParams.some((p) => p.required) &&
          op.success.some((s) => s.contentTypes.includes('application/json')),
      );
      expect(reads.length).toBeGreaterThan(15);
      // Break-glass routes exist only where SVC_BREAKGLASS_ENABLED is set; elsewhere they are a
      // typed 404 (docs/auth/breakglass.md), which is what this server shows.
      const disabled = new Set(['listBreakglassCredentials']);
      for (const op of reads) {
        if (disabled.has(op.operationId)) {
          const refused = await c.callRaw(op.operationId).catch((e: unknown) => e);
          expect(refused, op.operationId).toMatchObject({ status: 404 });
          continue;
        }
        const answer = await c.callRaw(op.operationId);
        expect(answer, op.operationId).toBeTypeOf('object');
      }
    } finally {
      await c.close();
    }
  });

  it('throws typed problem errors', async () => {
    const c = client();
    try {
      const missing = await c.getCertificate({ path: { id: 'cert-nope' } }).catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(ProblemError);
      expect(missing).toMatchObject({ status: 404, code: 'not_found', operationId: 'getCertificate' });
      expect((missing as ProblemError).problem.request_id).not.toBe('');

      const invalid = await c
        .createCertificate({ body: { ...base, owner_id: '', name: 'x', common_name: 'x.example.test' } })
        .catch((e: unknown) => e);
      expect(invalid).toMatchObject({ status: 400 });
      expect((invalid as ProblemError).problem.errors?.map((e) => e.field)).toContain('owner_id');

      const wrongKey = createClient({
        baseUrl: server.url,
        apiKey: 'wrong-key',
        caBundlePath: server.caPath,
      });
      const denied = await wrongKey.listCertificates().catch((e: unknown) => e);
      await wrongKey.close();
      expect(denied).toMatchObject({ status: 401 });
    } finally {
      await c.close();
    }
  });

  it('writes through other route families: owners CRUD, a renewal-policy conflict, issuance and a binary export', async () => {
    const c = client();
    try {
      const owner = await c.createOwner({ body: { name: `owner-${Date.now()}`, email: 'pki@example.test' } });
      expect(
        (await c.updateOwner({ path: { id: owner.id }, body: { name: `${owner.name}-renamed` } })).name,
      ).toBe(`${owner.name}-renamed`);
      expect(await c.deleteOwner({ path: { id: owner.id } })).toBeUndefined();
      await expect(c.getOwner({ path: { id: owner.id } })).rejects.toMatchObject({ status: 404 });

      const name = `rp-${Date.now()}`;
      await c.createRenewalPolicy({ body: { name } });
      await expect(c.createRenewalPolicy({ body: { name } })).rejects.toMatchObject({
        status: 409,
        code: 'conflict',
      });

      const cert = await c.createCertificate({
        body: { ...base, name: `bin-${Date.now()}`, common_name: 'bin.example.test' },
      });
      // The server's issuance worker issues Pending certificates on its own; an explicit issue
      // may lose that race (409), so wait for the outcome rather than assume who issued.
      await c
        .issueCertificate({ path: { id: cert.id }, body: { key_algorithm: 'ECDSA-P256' } })
        .catch((e: unknown) => {
          if (!(e instanceof ProblemError && e.status === 409)) throw e;
        });
      for (let s = (await c.getCertificate({ path: { id: cert.id } })).status; s !== 'Active'; ) {
        expect(['Pending', 'RenewalInProgress']).toContain(s);
        await new Promise((resolve) => setTimeout(resolve, 500));
        s = (await c.getCertificate({ path: { id: cert.id } })).status;
      }
      const der = await c.exportCertificate({ path: { id: cert.id }, query: { format: 'der' } });
      expect(der).toMatchObject({ contentType: expect.stringMatching(/^application\/pkix-cert/) });
      expect((der as { bytes: Uint8Array }).bytes.byteLength).toBeGreaterThan(100);
    } finally {
      await c.close();
    }
  });

  it('refuses to send without a required path parameter', async () => {
    const c = client();
    try {
      await expect(c.callRaw('getCertificate', { path: {} })).rejects.toThrow(
        /path parameter id is required/,
      );
    } finally {
      await c.close();
    }
  });
});

describe('retries', () => {
  it('retries a 429 after its Retry-After and returns the next answer', async () => {
    const stub = await startStubServer((_, index) =>
      index === 0
        ? {
            status: 429,
            headers: { 'retry-after': '1', 'content-type': 'application/problem+json' } as Record<
              string,
              string
            >,
            body: JSON.stringify({
              type: 'about:blank',
              title: 'Too Many Requests',
              status: 429,
              detail: 'slow down',
              error: 'rate_limited',
              request_id: 'r1',
            }),
          }
        : {
            status: 200,
            headers: { 'content-type': 'application/json' } as Record<string, string>,
            body: '{"auth_type":"none"}',
          },
    );
    const c = createClient({ baseUrl: stub.url, caBundlePath: stub.caPath });
    try {
      expect(await c.getAuthInfo()).toEqual({ auth_type: 'none' });
      expect(stub.requests.map((r) => r.url)).toEqual(['/api/v1/auth/info', '/api/v1/auth/info']);
    } finally {
      await c.close();
      await stub.close();
    }
  });

  it('retries a 503 without Retry-After with backoff, up to maxRetries, then throws the problem', async () => {
    const stub = await startStubServer(() => ({ status: 503, body: 'down' }));
    const c = createClient({ baseUrl: stub.url, caBundlePath: stub.caPath, maxRetries: 2 });
    try {
      const error = await c.getVersion().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProblemError);
      expect(error).toMatchObject({ status: 503, code: 'service_unavailable' });
      expect(stub.requests).toHaveLength(3);
    } finally {
      await c.close();
      await stub.close();
    }
  });

  it('does not repeat a POST after a bare 503, but does when the 503 carries Retry-After', async () => {
    const bare = await startStubServer(() => ({ status: 503 }));
    const c = createClient({ baseUrl: bare.url, caBundlePath: bare.caPath });
    try {
      await expect(c.createTeam({ body: { name: 't' } })).rejects.toMatchObject({ status: 503 });
      expect(bare.requests).toHaveLength(1);
    } finally {
      await c.close();
      await bare.close();
    }
    const asked = await startStubServer((_, index) =>
      index === 0
        ? { status: 503, headers: { 'retry-after': '0' } as Record<string, string> }
        : {
            status: 201,
            headers: { 'content-type': 'application/json' },
            body: '{"id":"team-1","name":"t"}',
          },
    );
    const d = createClient({ baseUrl: asked.url, caBundlePath: asked.caPath });
    try {
      expect(await d.createTeam({ body: { name: 't' } })).toMatchObject({ id: 'team-1' });
      expect(asked.requests.map((r) => r.body)).toEqual(['{"name":"t"}', '{"name":"t"}']);
    } finally {
      await d.close();
      await asked.close();
    }
  });

  it('does not wait out a Retry-After beyond its limit: the 429 is the answer', async () => {
    const stub = await startStubServer(() => ({ status: 429, headers: { 'retry-after': '3600' } }));
    const c = createClient({ baseUrl: stub.url, caBundlePath: stub.caPath });
    try {
      const error = await c.getVersion().catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 429, retryAfterSeconds: 3600 });
      expect(stub.requests).toHaveLength(1);
    } finally {
      await c.close();
      await stub.close();
    }
  });
});
