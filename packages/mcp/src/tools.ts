import type { OperationSpec, RawInput } from '@certwright/client';
import { OPERATION_PROPERTY_DESCRIPTIONS, PROPERTY_DESCRIPTIONS } from './descriptions.js';
import { outputSchemas } from './generated/output-schemas.js';
import { CLASSES, type Effect } from './toolsets.js';

type Schema = Record<string, unknown> & {
  type?: string | string[];
  format?: string;
  properties?: Record<string, unknown>;
  required?: string[];
  description?: string;
  anyOf?: Schema[];
};

/** An MCP tool generated from one REST operation. */
export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  /** What tools/list shows: described, bounded, without the patterns a format already names. */
  inputSchema: Schema & { type: 'object' };
  /** What arguments are checked against before anything is sent: the REST schema itself. */
  validationSchema: Schema & { type: 'object' };
  outputSchema: Schema & { type: 'object' };
  annotations: {
    title: string;
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
  effect: Effect;
  operation: OperationSpec;
  /** Where each argument goes: a path or query parameter, a body field, the whole body, or nowhere (confirm). */
  placement: Record<string, 'path' | 'query' | 'body-field' | 'body' | 'control'>;
}

/** Tool names fixed by the service's interface for MCP hosts; the rest are the operationId in snake_case. */
const NAMES: Record<string, string> = {
  retireAgent: 'retire_agent',
  bulkRevokeCertificates: 'svc_bulk_revoke_certificates',
  bulkRenewCertificates: 'svc_bulk_renew_certificates',
  bulkReassignCertificates: 'svc_bulk_reassign_certificates',
  createPolicyRule: 'create_policy',
  updatePolicyRule: 'update_policy',
  getPolicyRule: 'get_policy',
  listPolicyRules: 'list_policies',
  deletePolicyRule: 'delete_policy',
  listRenewalPolicys: 'list_renewal_policies',
};

/** Inputs a model must always give, even where the REST schema would let the server default them. */
const REQUIRED: Record<string, string[]> = {
  createCertificate: ['renewal_policy_id'],
  createTarget: ['agent_id'],
};

/** Written for a model: when to reach for the tool and what calling it changes. */
const GUIDANCE: Record<string, string> = {
  retireAgent:
    'Use when a deployment agent is decommissioned. Without force, the call fails with a conflict that counts ' +
    'its active targets, certificates and pending jobs; with force, reason is required and those dependencies ' +
    'are detached. A retired agent can no longer check in. Already retired: succeeds without change.',
  bulkRevokeCertificates:
    'Revokes every certificate matching ALL given criteria (certificate_ids, owner, team, profile, issuer, agent). ' +
    'Irreversible: relying parties will reject those certificates. List the matching certificates first and ' +
    'confirm with the user. Answers counts of matched, revoked, skipped and failed certificates.',
  bulkRenewCertificates:
    'Starts renewal of every matching certificate (new versions with new serials); certificates that are ' +
    'archived, revoked, expired or already renewing are skipped. Answers counts and the jobs created.',
  bulkReassignCertificates:
    'Moves the listed certificates to another owner (and optionally team). Fails before touching anything if ' +
    'the owner does not exist.',
  createPolicyRule:
    'Adds a policy rule that every certificate is evaluated against (type and its config; severity Warning, ' +
    'Error or Critical, default Warning). Violations appear in list_violations.',
  updatePolicyRule: 'Changes a policy rule; omitted fields, severity included, keep their values.',
  createCertificate:
    'Creates a certificate record in status Pending (nothing is issued yet: call issue_certificate next). ' +
    'owner_id, team_id, renewal_policy_id and issuer_id must name existing records (list_owners, list_teams, ' +
    'list_renewal_policies, list_issuers).',
  createTarget:
    'Registers where an agent deploys certificates (a web server, a key store …). agent_id must name an ' +
    'existing, non-retired agent (list_agents).',
};

/** Titles a host shows; the rest are the tool name in words. */
const TITLES: Record<string, string> = {
  getAuthSelf: 'Who am I',
  getVersion: 'Server version',
  getDashboardSummary: 'Dashboard summary',
  getDashboardOverview: 'Dashboard overview',
  getIssuerChain: 'Issuer CA chain',
  getCertificateKeyData: 'Certificate key data',
  exportCertificatePkcs12: 'Export certificate as PKCS#12',
  listRenewalPolicys: 'List renewal policies',
  estAdminProfiles: 'EST profiles',
  estAdminReloadTrust: 'Reload EST trust',
  scepAdminProfiles: 'SCEP profiles',
  scepMdmStats: 'SCEP MDM statistics',
  scepMdmReloadTrust: 'Reload SCEP MDM trust',
  healthCheckHistory: 'Health check history',
  healthCheckSummary: 'Health check summary',
  discoverySummary: 'Discovery summary',
  getAuthRuntimeConfig: 'Authentication settings',
  revokeOtherAuthSessions: 'End my other sessions',
  estBulkRevokeCertificates: 'Bulk revoke EST certificates',
};

const ACRONYMS: Record<string, string> = {
  acme: 'ACME',
  eab: 'EAB',
  est: 'EST',
  scep: 'SCEP',
  mdm: 'MDM',
  oidc: 'OIDC',
  jwks: 'JWKS',
  csr: 'CSR',
  auth: 'auth',
  pkcs12: 'PKCS#12',
};

/** `svc_bulk_revoke_certificates` → "Bulk revoke certificates". */
function titleOf(op: OperationSpec, name: string): string {
  const fixed = TITLES[op.operationId];
  if (fixed) return fixed;
  const words = name
    .replace(/^svc_/, '')
    .split('_')
    .map((w) => ACRONYMS[w] ?? w);
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Integer bounds where the REST schema has none (the server clamps or refuses outside them). */
const BOUNDS: Record<string, [number, number]> = {
  page: [1, 1_000_000],
  per_page: [1, 500],
};
const OPERATION_BOUNDS: Record<string, Record<string, [number, number]>> = {
  exportAudit: { limit: [1, 100_000] },
  listScepProbes: { limit: [1, 200] },
  verifyAuditChain: { anchor_seq: [1, 999_999_999] },
};
/** What JavaScript calls safe integers: the generated schemas' way of saying "no bound". */
const UNBOUNDED = 9_007_199_254_740_991;

const DESTRUCTIVE_NOTE =
  'Destructive: the server describes the change and asks the user to confirm it (elicitation); a host ' +
  'without elicitation gets that description back and calls again with confirm: true once the user agreed.';

const snake = (id: string) =>
  id
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();

export const toolNameOf = (op: OperationSpec) => NAMES[op.operationId] ?? snake(op.operationId);

function describe(op: OperationSpec, paged: boolean, effect: Effect): string {
  const parts = [`${op.summary.replace(/\.$/, '')}.`];
  if (GUIDANCE[op.operationId]) parts.push(GUIDANCE[op.operationId] as string);
  else if (effect === 'read') parts.push('Read-only.');
  else if (op.method === 'DELETE') parts.push('Deletes the record; it cannot be undone.');
  else if (effect === 'additive') parts.push('Adds or starts something; overwrites nothing.');
  else parts.push('Changes server state.');
  if (effect === 'destructive') parts.push(DESTRUCTIVE_NOTE);
  if (paged) parts.push('Answers one page {data, total, page, per_page}; pass page to read further pages.');
  if (op.admin) parts.push('Needs an admin API key.');
  return parts.join(' ');
}

/** A property as tools/list shows it: described, its integers bounded, a date-time without its pattern. */
function present(operationId: string, name: string, schema: Schema): Schema {
  const out: Schema = { ...schema };
  const description =
    schema.description || OPERATION_PROPERTY_DESCRIPTIONS[operationId]?.[name] || PROPERTY_DESCRIPTIONS[name];
  if (description) out.description = description;
  const bounds = OPERATION_BOUNDS[operationId]?.[name] ?? BOUNDS[name];
  const numeric = typeof schema.pattern === 'string' && /^\^-\?\\d\{1,9\}\$$/.test(schema.pattern);
  if (bounds && (schema.type === 'integer' || numeric)) {
    delete out.pattern;
    Object.assign(out, { type: 'integer', minimum: bounds[0], maximum: bounds[1] });
  }
  return slimFormats(out) as Schema;
}

/** Drops a pattern that spells out a `format` (the date-time pattern is 300 characters of tokens). */
function slimFormats(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(slimFormats);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'pattern' && 'format' in schema) continue;
    out[key] =
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, slimFormats(v)]))
        : slimFormats(value);
  }
  return out;
}

const OK: Schema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean', const: true, description: 'done; the server answered without content' },
  },
  required: ['ok'],
};
const FILE: Schema = {
  type: 'object',
  properties: {
    content_type: { type: 'string', description: 'the media type of the answer' },
    text: { type: 'string', description: 'PEM or NDJSON answers, as text' },
    base64: { type: 'string', description: 'binary answers (DER, PKCS#12), base64-encoded' },
  },
  required: ['content_type'],
};

/** The shape of the structured content a call answers (see success() in server.ts). */
function outputSchemaOf(op: OperationSpec): Schema & { type: 'object' } {
  const json = outputSchemas[op.operationId] as Schema | undefined;
  const empty = op.success.some((s) => s.contentTypes.length === 0);
  const files = op.success.some((s) => s.contentTypes.some((t) => !/^application\/json$/.test(t)));
  if (!json) return (files ? FILE : OK) as Schema & { type: 'object' };
  const variants = [
    ...(json.anyOf ?? [json]).map((v) =>
      v.type === 'array' ? { type: 'object', properties: { items: v } } : v,
    ),
    ...(empty ? [OK] : []),
  ];
  return (variants.length === 1 ? variants[0] : { type: 'object', anyOf: variants }) as Schema & {
    type: 'object';
  };
}

/** One tool per operation; its input schema is the operation's parameters and body fields, flattened. */
export function toolOf(op: OperationSpec): ToolSpec {
  const effect = CLASSES[op.operationId]?.effect ?? (op.method === 'GET' ? 'read' : 'destructive');
  const raw: Record<string, Schema> = {};
  const required = new Set<string>();
  const placement: ToolSpec['placement'] = {};
  for (const p of op.pathParams) {
    raw[p.name] = { ...(p.schema as Schema), ...(p.description ? { description: p.description } : {}) };
    required.add(p.name);
    placement[p.name] = 'path';
  }
  for (const p of op.queryParams) {
    raw[p.name] = { ...(p.schema as Schema), ...(p.description ? { description: p.description } : {}) };
    if (p.required) required.add(p.name);
    placement[p.name] = 'query';
  }
  const body = op.body?.schema as Schema | undefined;
  const fields = body?.type === 'object' && body.properties ? Object.entries(body.properties) : undefined;
  if (op.body && fields?.every(([name]) => !(name in raw))) {
    for (const [name, schema] of fields) {
      raw[name] = schema as Schema;
      placement[name] = 'body-field';
    }
    if (op.body.required) for (const name of body?.required ?? []) required.add(name);
  } else if (op.body) {
    raw.body = op.body.schema as Schema;
    placement.body = 'body';
    if (op.body.required) required.add('body');
  }
  for (const name of REQUIRED[op.operationId] ?? []) required.add(name);
  const shown = Object.fromEntries(Object.entries(raw).map(([n, s]) => [n, present(op.operationId, n, s)]));
  // What is checked keeps the REST schema's patterns, with the bounds and integer forms shown.
  const checked = Object.fromEntries(
    Object.entries(raw).map(([n, s]) => {
      const listed = shown[n] as Schema;
      return [
        n,
        listed.type === 'integer' && s.type !== 'integer'
          ? listed
          : { ...s, ...pick(listed, ['minimum', 'maximum']) },
      ];
    }),
  );
  if (effect === 'destructive') {
    const confirm = {
      type: 'boolean',
      description:
        'true once the user has agreed to the change a call without it described; hosts that support elicitation ask the user instead',
    };
    shown.confirm = confirm;
    checked.confirm = confirm;
    placement.confirm = 'control';
  }
  const name = toolNameOf(op);
  const title = titleOf(op, name);
  const paged =
    op.queryParams.some((p) => p.name === 'page') && op.queryParams.some((p) => p.name === 'per_page');
  const object = (properties: Record<string, unknown>) => ({
    type: 'object' as const,
    properties,
    ...(required.size > 0 ? { required: [...required] } : {}),
    additionalProperties: false,
  });
  return {
    name,
    title,
    description: describe(op, paged, effect),
    inputSchema: object(shown),
    validationSchema: object(checked),
    outputSchema: outputSchemaOf(op),
    annotations: {
      title,
      readOnlyHint: effect === 'read',
      destructiveHint: effect === 'destructive',
      idempotentHint: effect === 'read' || op.method === 'PUT' || op.method === 'DELETE',
      // Most tools act on this certwright server only; a few reach a CA, a scanned host, a webhook.
      openWorldHint: CLASSES[op.operationId]?.openWorld === true,
    },
    effect,
    operation: op,
    placement,
  };
}

const pick = (schema: Schema, keys: string[]) =>
  Object.fromEntries(
    keys.filter((k) => schema[k] !== undefined && schema[k] !== UNBOUNDED).map((k) => [k, schema[k]]),
  );

/** Splits a tool's validated arguments back into the REST call's path, query and body. */
export function inputOf(tool: ToolSpec, args: Record<string, unknown>): RawInput {
  const input: RawInput = {};
  for (const [name, value] of Object.entries(args)) {
    switch (tool.placement[name]) {
      case 'path':
        input.path = { ...input.path, [name]: value };
        break;
      case 'query':
        input.query = { ...input.query, [name]: value };
        break;
      case 'body-field':
        input.body = { ...(input.body as object | undefined), [name]: value };
        break;
      case 'body':
        input.body = value;
        break;
    }
  }
  if (input.body === undefined && tool.operation.body?.required) input.body = {};
  return input;
}
