import { CertwrightError } from '@certwright/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createHandler, defineRoute } from '../src/index.js';
import { OpenApiConformance } from './support/openapi-conformance.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * The api test harnesses (support/test-app.ts, lifecycle-support.ts, ops-support.ts) pass
 * every answer through OpenApiConformance, so each api test file checks the document against
 * what it observes. These tests prove the checker catches each kind of contradiction, and
 * check what only the document itself can show.
 */

type Operation = {
  operationId: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  security?: unknown[];
};

const SECRET = 'openapi-test-secret-0123456789';

describe('the conformance check', () => {
  const thing = z.object({ name: z.string() });
  const make = (checker: OpenApiConformance) =>
    createHandler({
      auth: { type: 'api-key', secret: SECRET },
      ...checker.options(),
      routes: [
        defineRoute({
          method: 'GET',
          path: '/api/v1/good',
          operationId: 'good',
          permission: 'system.read',
          summary: 'answers what it declares',
          tags: ['test'],
          responses: { 200: { description: 'ok', schema: thing } },
          handle: async () => ({ status: 200, body: { name: 'x' } }),
        }),
        defineRoute({
          method: 'GET',
          path: '/api/v1/wrong-shape',
          operationId: 'wrongShape',
          permission: 'system.read',
          summary: 'a body the schema refuses',
          tags: ['test'],
          responses: { 200: { description: 'ok', schema: thing } },
          handle: async () => ({ status: 200, body: { name: 42 } }),
        }),
        defineRoute({
          method: 'GET',
          path: '/api/v1/undeclared',
          operationId: 'undeclared',
          permission: 'system.read',
          summary: 'a status nobody declared',
          tags: ['test'],
          responses: { 200: { description: 'ok', schema: thing } },
          handle: async () => {
            throw new CertwrightError('conflict', 'taken');
          },
        }),
        defineRoute({
          method: 'GET',
          path: '/api/v1/plain-error',
          operationId: 'plainError',
          permission: 'system.read',
          summary: 'an error that is not problem JSON',
          tags: ['test'],
          responses: { 200: { description: 'ok', schema: thing }, 409: { description: 'taken' } },
          handle: async () =>
            new Response('taken', { status: 409, headers: { 'content-type': 'text/plain' } }),
        }),
        defineRoute({
          method: 'GET',
          path: '/api/v1/wrong-type',
          operationId: 'wrongType',
          permission: 'system.read',
          summary: 'a media type nobody declared',
          tags: ['test'],
          responses: { 200: { description: 'PEM', contentType: 'application/x-pem-file' } },
          handle: async () => new Response('x', { headers: { 'content-type': 'application/pkix-cert' } }),
        }),
      ],
    });
  const get = (checker: OpenApiConformance, handler: ReturnType<typeof make>, path: string) =>
    checker.call(
      handler,
      new Request(`https://localhost:8443${path}`, { headers: { authorization: `Bearer ${SECRET}` } }),
      { remoteAddress: '127.0.0.1' },
    );

  it('passes an answer that matches its operation, and an error the edge declares', async () => {
    const checker = new OpenApiConformance();
    const handler = make(checker);
    expect((await get(checker, handler, '/api/v1/good')).status).toBe(200);
    expect((await get(checker, handler, '/api/v1/nowhere')).status).toBe(404);
  });

  it('fails on a body that does not match the declared schema', async () => {
    const checker = new OpenApiConformance();
    await expect(get(checker, make(checker), '/api/v1/wrong-shape')).rejects.toThrow(
      /wrongShape|does not match the declared schema: \/name must be string/,
    );
  });

  it('fails on a status the operation does not declare', async () => {
    const checker = new OpenApiConformance();
    await expect(get(checker, make(checker), '/api/v1/undeclared')).rejects.toThrow(
      /undeclared answered 409, which its OpenAPI operation does not declare/,
    );
  });

  it('fails on an error that is not application/problem+json', async () => {
    const checker = new OpenApiConformance();
    await expect(get(checker, make(checker), '/api/v1/plain-error')).rejects.toThrow(
      /an error answered 'text\/plain', not application\/problem\+json/,
    );
  });

  it('fails on a media type the status does not declare', async () => {
    const checker = new OpenApiConformance();
    await expect(get(checker, make(checker), '/api/v1/wrong-type')).rejects.toThrow(
      /answered Content-Type 'application\/pkix-cert'; declared: application\/x-pem-file/,
    );
  });
});

describe('the OpenAPI document of the full service', () => {
  let app: TestApp;
  let doc: { paths: Record<string, Record<string, Operation>> };
  beforeAll(async () => {
    app = await createTestApp();
    const res = await app.call('GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  }, 180_000);
  afterAll(() => app.close());

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, op })),
    );

  it('describes each REST route once, and every one of its errors as problem JSON', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const protocol = new Set(
      app.handler.protocols.flatMap((m) =>
        Object.values(m.operations ?? {}).flatMap((item) => Object.values(item).map((op) => op?.operationId)),
      ),
    );
    for (const route of app.handler.routes) {
      expect(doc.paths[route.path]?.[route.method.toLowerCase()]?.operationId).toBe(route.operationId);
    }
    for (const { path, method, op } of operations()) {
      if (protocol.has(op.operationId)) continue;
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        // The one exception: a probe's 503 carries the readiness report, like its 200.
        if (op.operationId === 'getReady' && status === '503') continue;
        expect(Object.keys(response.content ?? {}), `${method} ${path} ${status}`).toEqual([
          'application/problem+json',
        ]);
      }
    }
  });

  it('describes CRL and OCSP as public operations with their media types', () => {
    const crl = doc.paths['/.well-known/pki/crl/{issuer_id}']?.get;
    expect(crl?.security).toEqual([]);
    expect(Object.keys(crl?.responses['200']?.content ?? {})).toEqual([
      'application/pkix-crl',
      'application/x-pem-file',
    ]);
    const post = doc.paths['/.well-known/pki/ocsp/{issuer_id}']?.post as Operation & {
      requestBody: { content: Record<string, unknown> };
    };
    expect(Object.keys(post.requestBody.content)).toEqual(['application/ocsp-request']);
    expect(Object.keys(post.responses['200']?.content ?? {})).toEqual(['application/ocsp-response']);
    expect(doc.paths['/.well-known/pki/ocsp/{issuer_id}/{ocsp_request}']?.get?.operationId).toBe(
      'getOcspRequest',
    );
    expect(doc.paths['/.well-known/pki/ocsp/{issuer_id}/serial/{serial}']?.get?.operationId).toBe(
      'getOcspSerialStatus',
    );
  });

  it('declares every path parameter of every operation', () => {
    for (const { path, method, op } of operations()) {
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const declared = ((op as { parameters?: { name: string; in: string }[] }).parameters ?? [])
        .filter((p) => p.in === 'path')
        .map((p) => p.name);
      expect(declared.sort(), `${method} ${path}`).toEqual(inPath.sort());
    }
  });

  it('keeps secrets write-only: the issuer response schema has no config', () => {
    const schema = doc.paths['/api/v1/issuers/{id}']?.get?.responses['200']?.content?.['application/json']
      ?.schema as { properties: object };
    expect(Object.keys(schema.properties)).not.toContain('config');
  });
});
