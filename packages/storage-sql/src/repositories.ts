import type { Storage } from '@certwright/core';
import type { Ctx } from './context.js';
import { acmeRepositories } from './repos/acme.js';
import { agentRepository, targetRepository } from './repos/agents.js';
import { auditRepository } from './repos/audit.js';
import { certificateRepository } from './repos/certificates.js';
import {
  discoveredCertificateRepository,
  discoveryScanRepository,
  scanTargetRepository,
} from './repos/discovery.js';
import { healthCheckRepository } from './repos/health-checks.js';
import { jobRepository } from './repos/jobs.js';
import { nameRepository } from './repos/names.js';
import { notificationRepository } from './repos/notifications.js';
import { peopleRepositories } from './repos/people.js';
import { policyRuleRepository, violationRepository } from './repos/policy.js';
import {
  issuerRepository,
  ownerRepository,
  profileRepository,
  renewalPolicyRepository,
  teamRepository,
} from './repos/reference.js';
import { scepRepositories } from './repos/scep.js';
import { scepProbeRepository } from './repos/scep-probes.js';
import { settingsRepository } from './repos/settings.js';
import { versionRepository } from './repos/versions.js';
import { webhookRepository } from './repos/webhooks.js';

/** The repositories of a Storage: everything but its engine and its transaction operations. */
export type Repositories = Omit<Storage, 'engine' | 'transaction' | 'afterCommit' | 'ping'>;

/**
 * Every repository, by the factory that builds it for a context (some build several at once).
 * One list for the storage outside transactions, built whole, and for a transaction's storage,
 * which builds a group only when the transaction first uses one of its repositories
 * (tx-storage.ts).
 */
export const REPOSITORY_GROUPS: readonly ((ctx: Ctx) => Partial<Repositories>)[] = [
  (c) => ({ certificates: certificateRepository(c) }),
  (c) => ({ versions: versionRepository(c) }),
  (c) => ({ issuers: issuerRepository(c) }),
  (c) => ({ owners: ownerRepository(c) }),
  (c) => ({ teams: teamRepository(c) }),
  (c) => ({ profiles: profileRepository(c) }),
  (c) => ({ renewalPolicies: renewalPolicyRepository(c) }),
  (c) => ({ policyRules: policyRuleRepository(c) }),
  (c) => ({ violations: violationRepository(c) }),
  (c) => ({ agents: agentRepository(c) }),
  (c) => ({ targets: targetRepository(c) }),
  (c) => ({ jobs: jobRepository(c) }),
  (c) => ({ notifications: notificationRepository(c) }),
  (c) => ({ webhooks: webhookRepository(c) }),
  (c) => ({ settings: settingsRepository(c) }),
  (c) => ({ audit: auditRepository(c) }),
  (c) => ({ scepProbes: scepProbeRepository(c) }),
  (c) => ({ names: nameRepository(c) }),
  acmeRepositories,
  scepRepositories,
  (c) => ({ scanTargets: scanTargetRepository(c) }),
  (c) => ({ discoveryScans: discoveryScanRepository(c) }),
  (c) => ({ discovered: discoveredCertificateRepository(c) }),
  (c) => ({ healthChecks: healthCheckRepository(c) }),
  peopleRepositories,
];

/** Which repositories each group builds: the same for every context, so learned once. */
let groupKeys: readonly (readonly string[])[] | null = null;

/** Every repository, built now. */
export function allRepositories(ctx: Ctx): Repositories {
  const groups = REPOSITORY_GROUPS.map((group) => group(ctx));
  groupKeys ??= groups.map((g) => Object.keys(g));
  return Object.assign({}, ...groups) as Repositories;
}

/** The repository names of each group, once `allRepositories` has run (a storage was created). */
export function repositoryGroupKeys(): readonly (readonly string[])[] {
  if (!groupKeys) throw new Error('repositoryGroupKeys before any storage was built');
  return groupKeys;
}
