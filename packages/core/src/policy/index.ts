export {
  type ConfigReading,
  RULE_CONFIG_KEY,
  RULE_CONFIG_SCHEMAS,
  type RuleConfigOf,
  readRuleConfig,
} from './config.js';
export {
  type Evaluation,
  evaluateRules,
  type FoundViolation,
  missingConfigurationMessage,
  type SkippedRule,
} from './engine.js';
export {
  allowedDomains,
  allowedEnvironments,
  allowedIssuers,
  certificateLifetime,
  domainMatches,
  EVALUATORS,
  type EvaluationSubject,
  type RuleOutcome,
  renewalLeadTime,
  requiredMetadata,
} from './evaluators.js';
