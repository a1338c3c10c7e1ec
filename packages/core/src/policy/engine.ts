import type { PolicyRule, PolicyRuleType, Severity } from '../domain/policy.js';
import { publicMessage } from '../errors.js';
import { readRuleConfig } from './config.js';
import { EVALUATORS, type EvaluationSubject } from './evaluators.js';

export interface FoundViolation {
  rule_id: string;
  rule_type: PolicyRuleType;
  /** The rule's severity. */
  severity: Severity;
  message: string;
}

export interface SkippedRule {
  rule_id: string;
  rule_type: PolicyRuleType;
  /** Why, as an operator may read it; never an exception's own text. */
  reason: string;
  /** The exception of an evaluator that threw, for the caller's log. */
  error?: unknown;
}

export interface Evaluation {
  violations: FoundViolation[];
  /** Rules that could not judge this certificate; the caller logs them (rules 3 and 4). */
  skipped: SkippedRule[];
}

/** Message of the missing-configuration violation of each type. */
export function missingConfigurationMessage(rule: Pick<PolicyRule, 'name' | 'type'>): string {
  return `${rule.type} rule '${rule.name}' has no configuration`;
}

/**
 * Applies every enabled rule to one certificate. Pure: the same rules and subject always give
 * the same result. A rule that fails in any way is skipped, never allowed to stop the others.
 */
export function evaluateRules(rules: readonly PolicyRule[], subject: EvaluationSubject): Evaluation {
  const out: Evaluation = { violations: [], skipped: [] };
  for (const rule of rules) {
    if (!rule.enabled) continue;
    const base = { rule_id: rule.id, rule_type: rule.type };
    const config = readRuleConfig(rule.type, rule.config);
    if (config.kind === 'missing') {
      out.violations.push({ ...base, severity: rule.severity, message: missingConfigurationMessage(rule) });
      continue;
    }
    if (config.kind === 'malformed') {
      out.skipped.push({ ...base, reason: `malformed config: ${config.reason}` });
      continue;
    }
    const evaluate = EVALUATORS[rule.type] as (
      s: EvaluationSubject,
      c: unknown,
    ) => ReturnType<(typeof EVALUATORS)['AllowedIssuers']>;
    let outcome: ReturnType<typeof evaluate>;
    try {
      outcome = evaluate(subject, config.value);
    } catch (error) {
      out.skipped.push({ ...base, reason: `evaluation failed: ${publicMessage(error)}`, error });
      continue;
    }
    if (outcome.result === 'violation') {
      out.violations.push({ ...base, severity: rule.severity, message: outcome.message });
    } else if (outcome.result === 'skip') {
      out.skipped.push({ ...base, reason: outcome.reason });
    }
  }
  return out;
}
