import { expect } from 'vitest';
import type { TestApp } from './test-app.js';

export interface References {
  owner: string;
  team: string;
  issuer: string;
  policy: string;
  profile: string;
  agentProfile: string;
}

/** Creates one of each record a certificate references, through the API. */
export async function seedReferences(app: TestApp, suffix = ''): Promise<References> {
  const post = async (path: string, body: unknown) => {
    const res = await app.call('POST', path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  return {
    owner: await post('/api/v1/owners', { name: `Alice${suffix}`, email: 'alice@example.com' }),
    team: await post('/api/v1/teams', { name: `Platform${suffix}` }),
    issuer: await post('/api/v1/issuers', {
      name: `Inventory CA${suffix}`,
      type: 'Local',
      config: { password: 's3cret' },
    }),
    policy: await post('/api/v1/renewal-policies', { name: `Standard${suffix}` }),
    profile: await post('/api/v1/profiles', { name: `Web TLS${suffix}`, key_generation: 'server' }),
    agentProfile: await post('/api/v1/profiles', { name: `Agent keys${suffix}`, key_generation: 'agent' }),
  };
}

export function certificateBody(refs: References, overrides: Record<string, unknown> = {}) {
  return {
    name: 'www',
    common_name: 'www.example.com',
    renewal_policy_id: refs.policy,
    issuer_id: refs.issuer,
    owner_id: refs.owner,
    team_id: refs.team,
    ...overrides,
  };
}

export async function createCertificate(
  app: TestApp,
  refs: References,
  overrides: Record<string, unknown> = {},
) {
  const res = await app.call('POST', '/api/v1/certificates', certificateBody(refs, overrides));
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; status: string } & Record<string, unknown>;
}
