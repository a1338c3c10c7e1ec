import {
  bulkReassignSchema,
  bulkRenewSchema,
  bulkRevokeSchema,
  certificateCreateSchema,
  certificateUpdateSchema,
  issuerCreateSchema,
  issuerUpdateSchema,
  type ManualClock,
  ownerCreateSchema,
  ownerUpdateSchema,
  policyRuleCreateSchema,
  policyRuleUpdateSchema,
  profileCreateSchema,
  profileUpdateSchema,
  renewalPolicyCreateSchema,
  renewalPolicyUpdateSchema,
  teamCreateSchema,
  teamUpdateSchema,
} from '@certwright/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  certificateBody,
  createCertificate,
  type References,
  seedReferences,
} from './support/inventory-fixtures.js';
import { createTestApp, type TestApp } from './support/test-app.js';

let app: TestApp;
let refs: References;
let certId: string;
let ruleId: string;

interface Target {
  method: 'POST' | 'PUT';
  path: () => string;
  schema: z.ZodType;
  /** A body the route accepts, mutated one field at a time. */
  valid: () => Record<string, unknown>;
}

let targets: Record<string, Target>;

beforeAll(async () => {
  app = await createTestApp();
  refs = await seedReferences(app);
  certId = (await createCertificate(app, refs)).id;
  ruleId = (await app.call('POST', '/api/v1/policies', { name: 'r', type: 'AllowedIssuers' })).body.id;
  targets = {
    'create certificate': {
      method: 'POST',
      path: () => '/api/v1/certificates',
      schema: certificateCreateSchema,
      valid: () => certificateBody(refs),
    },
    'update certificate': {
      method: 'PUT',
      path: () => `/api/v1/certificates/${certId}`,
      schema: certificateUpdateSchema,
      valid: () => ({ name: 'n', owner_id: refs.owner }),
    },
    'create owner': {
      method: 'POST',
      path: () => '/api/v1/owners',
      schema: ownerCreateSchema,
      valid: () => ({ name: 'o', email: 'o@example.com' }),
    },
    'update owner': {
      method: 'PUT',
      path: () => `/api/v1/owners/${refs.owner}`,
      schema: ownerUpdateSchema,
      valid: () => ({ name: 'o' }),
    },
    'create team': {
      method: 'POST',
      path: () => '/api/v1/teams',
      schema: teamCreateSchema,
      valid: () => ({ name: 't', description: 'd' }),
    },
    'update team': {
      method: 'PUT',
      path: () => `/api/v1/teams/${refs.team}`,
      schema: teamUpdateSchema,
      valid: () => ({ description: 'd' }),
    },
    'create issuer': {
      method: 'POST',
      path: () => '/api/v1/issuers',
      schema: issuerCreateSchema,
      valid: () => ({ name: 'i', type: 'StepCA', config: { k: 'v' }, enabled: true }),
    },
    'update issuer': {
      method: 'PUT',
      path: () => `/api/v1/issuers/${refs.issuer}`,
      schema: issuerUpdateSchema,
      valid: () => ({ enabled: true }),
    },
    'create profile': {
      method: 'POST',
      path: () => '/api/v1/profiles',
      schema: profileCreateSchema,
      valid: () => ({
        name: 'p',
        allowed_ekus: ['serverAuth'],
        must_staple: true,
        max_validity_days: 90,
        key_generation: 'agent',
      }),
    },
    'update profile': {
      method: 'PUT',
      path: () => `/api/v1/profiles/${refs.profile}`,
      schema: profileUpdateSchema,
      valid: () => ({ must_staple: false }),
    },
    'create renewal policy': {
      method: 'POST',
      path: () => '/api/v1/renewal-policies',
      schema: renewalPolicyCreateSchema,
      valid: () => ({
        name: 'rp',
        renewal_window_days: 10,
        max_retries: 2,
        retry_interval_seconds: 600,
        alert_thresholds_days: [1],
      }),
    },
    'update renewal policy': {
      method: 'PUT',
      path: () => `/api/v1/renewal-policies/${refs.policy}`,
      schema: renewalPolicyUpdateSchema,
      valid: () => ({ renewal_window_days: 30 }),
    },
    'create policy rule': {
      method: 'POST',
      path: () => '/api/v1/policies',
      schema: policyRuleCreateSchema,
      valid: () => ({
        name: 'r',
        type: 'AllowedDomains',
        severity: 'Error',
        config: { allowed_domains: ['a.example'] },
      }),
    },
    'update policy rule': {
      method: 'PUT',
      path: () => `/api/v1/policies/${ruleId}`,
      schema: policyRuleUpdateSchema,
      valid: () => ({ severity: 'Error' }),
    },
    'bulk revoke': {
      method: 'POST',
      path: () => '/api/v1/certificates/bulk-revoke',
      schema: bulkRevokeSchema,
      valid: () => ({ certificate_ids: ['mc-none'], reason: 'superseded' }),
    },
    'EST bulk revoke': {
      method: 'POST',
      path: () => '/api/v1/est/certificates/bulk-revoke',
      schema: bulkRevokeSchema,
      valid: () => ({ certificate_ids: ['mc-none'] }),
    },
    'bulk renew': {
      method: 'POST',
      path: () => '/api/v1/certificates/bulk-renew',
      schema: bulkRenewSchema,
      valid: () => ({ certificate_ids: ['mc-none'] }),
    },
    'bulk reassign': {
      method: 'POST',
      path: () => '/api/v1/certificates/bulk-reassign',
      schema: bulkReassignSchema,
      valid: () => ({ certificate_ids: ['mc-none'], owner_id: refs.owner }),
    },
  };
});
afterAll(() => app.close());

const WRITTEN_TABLES = [
  'certificates',
  'owners',
  'teams',
  'issuers',
  'certificate_profiles',
  'renewal_policies',
  'policy_rules',
] as const;

/**
 * What "unchanged" means, read in one round trip: the row count and the latest updated_at of
 * every table these routes write (the clock moves before each request, so any update shows),
 * plus the violation and job counts and the audit chain head (each successful write appends).
 */
async function snapshot() {
  const row = await app.storage.db
    .selectNoFrom((eb) => [
      ...WRITTEN_TABLES.flatMap((t) => [
        eb.selectFrom(t).select(eb.fn.countAll().as('n')).as(`${t}_count`),
        eb
          .selectFrom(t)
          .select((e) => e.fn.max('updated_at' as never).as('m'))
          .as(`${t}_updated`),
      ]),
      eb.selectFrom('policy_violations').select(eb.fn.countAll().as('n')).as('violations'),
      eb.selectFrom('jobs').select(eb.fn.countAll().as('n')).as('jobs'),
      eb.selectFrom('audit_head').select('last_seq').as('audit'),
    ])
    .executeTakeFirstOrThrow();
  (app.clock as ManualClock).advance(1000);
  return JSON.parse(JSON.stringify(row));
}

/** Values of the wrong type or shape for nearly every field, plus classic injection text. */
const hostileValue = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    0,
    -1,
    1.5,
    1e308,
    true,
    [],
    {},
    '',
    ' ',
    'x'.repeat(5000),
    "'; drop table certificates; --",
    '\u0000',
    '../../etc/passwd',
    { __proto__: { admin: true } },
    JSON.parse('{"__proto__": {"polluted": true}}'),
    [[[[[]]]]],
    ['a', 1, null],
    { $ne: null },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

const noServerError = (status: number) => expect(status).toBeLessThan(500);

describe('hostile JSON at every create and update route', () => {
  it('never answers 5xx to arbitrary JSON, and changes nothing when it refuses', async () => {
    for (const [name, target] of Object.entries(targets)) {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (body) => {
          const before = await snapshot();
          const res = await app.call(target.method, target.path(), body);
          noServerError(res.status);
          if (res.status >= 400) {
            expect(res.headers.get('content-type'), name).toBe('application/problem+json');
            expect(await snapshot(), name).toEqual(before);
          }
        }),
        { numRuns: 25 },
      );
    }
  }, 180_000);

  it('refuses a body that is not JSON with 400 naming body, changing nothing', async () => {
    for (const target of Object.values(targets)) {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.constantFrom('{', '{"name":', '[1,', 'nul', '\u00ff\u00fe', '{"a":1}}'),
            fc.string({ minLength: 1 }),
          ),
          async (raw) => {
            fc.pre(!isJson(raw));
            const before = await snapshot();
            const res = await app.call(target.method, target.path(), undefined, { raw });
            expect(res.status).toBe(400);
            expect(res.body.errors).toEqual([{ field: 'body', message: 'is not valid JSON' }]);
            expect(await snapshot()).toEqual(before);
          },
        ),
        { numRuns: 10 },
      );
    }
  }, 180_000);

  it('answers 400 naming the field when one field of a valid body turns hostile, changing nothing', async () => {
    for (const [name, target] of Object.entries(targets)) {
      const keys = Object.keys(target.valid());
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...keys), hostileValue, async (key, value) => {
          const body = { ...target.valid(), [key]: value };
          fc.pre(!target.schema.safeParse(body).success);
          const before = await snapshot();
          const res = await app.call(target.method, target.path(), body);
          expect(res.status, `${name} ${key}=${JSON.stringify(value)?.slice(0, 80)}`).toBe(400);
          const fields = (res.body.errors as { field: string }[]).map((e) => e.field.split('.')[0]);
          expect(fields, name).toContain(key);
          expect(await snapshot(), name).toEqual(before);
        }),
        { numRuns: 25 },
      );
    }
  }, 180_000);
});

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
