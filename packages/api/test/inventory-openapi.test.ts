import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/test-app.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app.close());

const INVENTORY_ROUTES = [
  'POST /api/v1/certificates/bulk-revoke',
  'POST /api/v1/certificates/bulk-renew',
  'POST /api/v1/certificates/bulk-reassign',
  'POST /api/v1/est/certificates/bulk-revoke',
  'GET /api/v1/certificates',
  'POST /api/v1/certificates',
  'GET /api/v1/certificates/{id}',
  'PUT /api/v1/certificates/{id}',
  'DELETE /api/v1/certificates/{id}',
  'POST /api/v1/certificates/{id}/archive',
  'POST /api/v1/certificates/{id}/revoke',
  'GET /api/v1/certificates/{id}/versions',
  'GET /api/v1/certificates/{id}/key-data',
  ...['owners', 'teams', 'issuers', 'profiles', 'renewal-policies', 'policies'].flatMap((r) => [
    `GET /api/v1/${r}`,
    `POST /api/v1/${r}`,
    `GET /api/v1/${r}/{id}`,
    `PUT /api/v1/${r}/{id}`,
    `DELETE /api/v1/${r}/{id}`,
  ]),
  'POST /api/v1/policies/evaluate',
  'GET /api/v1/violations',
  'GET /api/v1/violations/{id}',
];

it('describes every inventory route with its request and response schemas', async () => {
  const doc = (await app.call('GET', '/api/v1/openapi.json')).body;
  for (const route of INVENTORY_ROUTES) {
    const [method, path] = route.split(' ') as [string, string];
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect(op, route).toBeDefined();
    const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'));
    expect(success, route).toBeDefined();
    const [status, response] = success as [string, { content?: Record<string, { schema: unknown }> }];
    if (status !== '204') expect(response.content?.['application/json']?.schema, route).toBeDefined();
    if (method === 'POST' || method === 'PUT') {
      if (!route.endsWith('/archive') && !route.endsWith('/evaluate')) {
        expect(op.requestBody?.content?.['application/json']?.schema, route).toBeDefined();
      }
    }
  }
  expect(doc.paths['/api/v1/est/certificates/bulk-revoke'].post['x-admin-only']).toBe(true);
  // Secrets are write-only: the issuer response schema has no config.
  const issuer = doc.paths['/api/v1/issuers/{id}'].get.responses['200'].content['application/json'].schema;
  expect(Object.keys(issuer.properties)).not.toContain('config');
});
