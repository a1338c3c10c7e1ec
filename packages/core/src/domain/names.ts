import type { Permission } from './permissions.js';

/**
 * The kinds of record whose names a list can resolve in one request (`GET /api/v1/names`),
 * each with the read permission a caller needs to learn them: a name is as much a part of the
 * record as any other field.
 */
export const NAMED_KINDS = {
  certificate: 'cert.read',
  issuer: 'issuer.read',
  owner: 'owner.read',
  team: 'team.read',
  profile: 'profile.read',
  renewal_policy: 'renewal_policy.read',
  policy_rule: 'policy.read',
  agent: 'agent.read',
  target: 'target.read',
  webhook: 'webhook.read',
  scan_target: 'scan.read',
  health_check: 'healthcheck.read',
  user: 'auth.user.read',
} as const satisfies Record<string, Permission>;

export type NamedKind = keyof typeof NAMED_KINDS;

export const NAMED_KIND_NAMES = Object.freeze(Object.keys(NAMED_KINDS) as NamedKind[]);
