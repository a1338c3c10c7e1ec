import { describe, expect, it } from 'vitest';
import type { ManagedCertificate } from '../domain/certificate.js';
import type { PolicyRule } from '../domain/policy.js';
import { readRuleConfig } from './config.js';
import { evaluateRules } from './engine.js';
import { domainMatches } from './evaluators.js';

const at = new Date('2026-01-01T00:00:00Z');
const certificate: ManagedCertificate = {
  id: 'mc-1',
  name: 'www',
  common_name: 'www.example.com',
  sans: ['api.example.com'],
  status: 'Active',
  source: '',
  issuer_id: 'iss-a',
  owner_id: 'own-a',
  team_id: 'team-a',
  renewal_policy_id: 'rp-a',
  profile_id: null,
  environment: null,
  metadata: { environment: 'prod', cost_center: ' ' },
  tags: [],
  current_version_id: null,
  expires_at: null,
  last_renewal_at: null,
  created_at: at,
  updated_at: at,
};

function rule(
  type: PolicyRule['type'],
  config: unknown,
  severity: PolicyRule['severity'] = 'Error',
): PolicyRule {
  return {
    id: `pr-${type}`,
    name: type,
    type,
    severity,
    config,
    enabled: true,
    description: null,
    created_at: at,
    updated_at: at,
  };
}

describe('domainMatches', () => {
  it('matches a wildcard pattern against exactly one extra label', () => {
    expect(domainMatches('*.example.com', 'www.example.com')).toBe(true);
    expect(domainMatches('*.example.com', 'WWW.Example.COM.')).toBe(true);
    expect(domainMatches('*.example.com', 'example.com')).toBe(false);
    expect(domainMatches('*.example.com', 'a.b.example.com')).toBe(false);
    expect(domainMatches('*.example.com', 'wwwexample.com')).toBe(false);
    expect(domainMatches('*.example.com', '*.example.com')).toBe(true);
  });
  it('matches a plain pattern only exactly', () => {
    expect(domainMatches('example.com', 'example.com')).toBe(true);
    expect(domainMatches('example.com', 'www.example.com')).toBe(false);
    expect(domainMatches('example.com', '*.example.com')).toBe(false);
  });
});

describe('readRuleConfig', () => {
  it('tells missing, malformed and usable configs apart', () => {
    expect(readRuleConfig('AllowedDomains', null)).toEqual({ kind: 'missing' });
    expect(readRuleConfig('AllowedDomains', '')).toEqual({ kind: 'missing' });
    expect(readRuleConfig('AllowedDomains', {})).toEqual({ kind: 'missing' });
    expect(readRuleConfig('AllowedDomains', 'null')).toEqual({ kind: 'missing' });
    expect(readRuleConfig('AllowedDomains', '{"allowed_domains":')).toMatchObject({ kind: 'malformed' });
    expect(readRuleConfig('AllowedDomains', [1])).toMatchObject({ kind: 'malformed' });
    expect(readRuleConfig('AllowedDomains', { allowed_domains: 'example.com' })).toMatchObject({
      kind: 'malformed',
    });
    expect(readRuleConfig('AllowedDomains', '{"allowed_domains":["example.com"]}')).toEqual({
      kind: 'ok',
      value: { allowed_domains: ['example.com'] },
    });
  });
});

describe('evaluateRules', () => {
  const subject = { certificate, version: null, renewalPolicy: null };

  it('skips a rule whose evaluator throws with a safe reason, handing the exception to the caller to log', () => {
    // Data the evaluator never expected (a record read past its schema) makes it throw a TypeError.
    const broken = { ...subject, certificate: { ...certificate, sans: null as unknown as string[] } };
    const result = evaluateRules([rule('AllowedDomains', { allowed_domains: ['*.example.com'] })], broken);
    expect(result.violations).toEqual([]);
    expect(result.skipped).toEqual([
      {
        rule_id: 'pr-AllowedDomains',
        rule_type: 'AllowedDomains',
        reason: 'evaluation failed: internal error',
        error: expect.any(TypeError),
      },
    ]);
  });

  it('gives each violation its rule severity and keeps evaluating past a malformed rule', () => {
    const result = evaluateRules(
      [
        rule('AllowedIssuers', '{not json', 'Critical'),
        rule('AllowedDomains', { allowed_domains: ['*.example.com'] }, 'Warning'),
        rule('AllowedIssuers', { allowed_issuer_ids: ['iss-b'] }, 'Critical'),
        rule('RequiredMetadata', { required_keys: ['cost_center', 'environment'] }, 'Error'),
      ],
      subject,
    );
    expect(result.skipped).toEqual([
      {
        rule_id: 'pr-AllowedIssuers',
        rule_type: 'AllowedIssuers',
        reason: 'malformed config: config is not valid JSON',
      },
    ]);
    expect(result.violations).toEqual([
      {
        rule_id: 'pr-AllowedIssuers',
        rule_type: 'AllowedIssuers',
        severity: 'Critical',
        message: "issuer 'iss-a' is not an allowed issuer",
      },
      {
        rule_id: 'pr-RequiredMetadata',
        rule_type: 'RequiredMetadata',
        severity: 'Error',
        message: 'missing metadata keys: cost_center',
      },
    ]);
  });

  it('yields the missing-configuration violation for an empty config', () => {
    const result = evaluateRules([rule('RenewalLeadTime', {}, 'Warning')], subject);
    expect(result.violations).toEqual([
      {
        rule_id: 'pr-RenewalLeadTime',
        rule_type: 'RenewalLeadTime',
        severity: 'Warning',
        message: "RenewalLeadTime rule 'RenewalLeadTime' has no configuration",
      },
    ]);
  });

  it('reads the environment from the field, falling back to metadata', () => {
    const allowed = [rule('AllowedEnvironments', { allowed: ['prod'] })];
    expect(evaluateRules(allowed, subject).violations).toEqual([]);
    const staging = { ...subject, certificate: { ...certificate, environment: 'staging' } };
    expect(evaluateRules(allowed, staging).violations[0]?.message).toBe(
      "environment 'staging' is not allowed",
    );
    const none = { ...subject, certificate: { ...certificate, metadata: {} } };
    expect(evaluateRules(allowed, none).violations[0]?.message).toBe('certificate has no environment');
  });

  it('skips CertificateLifetime without a version and judges validity with one', () => {
    const rules = [rule('CertificateLifetime', { max_days: 90 })];
    expect(evaluateRules(rules, subject).skipped[0]?.reason).toBe('certificate has no version yet');
    const version = { not_before: at, not_after: new Date('2026-04-01T00:00:01Z') } as never;
    expect(evaluateRules(rules, { ...subject, version }).violations[0]?.message).toBe(
      'validity of 91 days exceeds the maximum of 90 days',
    );
    const ok = { not_before: at, not_after: new Date('2026-04-01T00:00:00Z') } as never;
    expect(evaluateRules(rules, { ...subject, version: ok }).violations).toEqual([]);
  });

  it('compares RenewalLeadTime with the renewal window', () => {
    const rules = [rule('RenewalLeadTime', { lead_time_days: 30 })];
    const policy = (days: number) => ({ renewal_window_days: days }) as never;
    expect(evaluateRules(rules, { ...subject, renewalPolicy: policy(30) }).violations).toEqual([]);
    expect(evaluateRules(rules, { ...subject, renewalPolicy: policy(29) }).violations).toHaveLength(1);
  });

  it('ignores disabled rules', () => {
    expect(evaluateRules([{ ...rule('AllowedIssuers', null), enabled: false }], subject)).toEqual({
      violations: [],
      skipped: [],
    });
  });
});
