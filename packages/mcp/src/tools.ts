import type { OperationSpec, RawInput } from '@certwright/client';

type Schema = Record<string, unknown> & {
  type?: string;
  properties?: Record<string, unknown>;
  required?: string[];
  description?: string;
};

/** An MCP tool generated from one REST operation. */
export interface ToolSpec {
  name: string;
  title: string;
  description: string;
  inputSchema: Schema & { type: 'object' };
  annotations: {
    title: string;
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
  operation: OperationSpec;
  /** Where each argument goes: a path or query parameter, a body field, or the whole body. */
  placement: Record<string, 'path' | 'query' | 'body-field' | 'body'>;
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

const snake = (id: string) =>
  id
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();

export const toolNameOf = (op: OperationSpec) => NAMES[op.operationId] ?? snake(op.operationId);

const DESTRUCTIVE = /revoke|retire|archive|delete|cancel|reassign/i;

function describe(op: OperationSpec, paged: boolean): string {
  const parts = [`${op.summary.replace(/\.$/, '')}.`];
  if (GUIDANCE[op.operationId]) parts.push(GUIDANCE[op.operationId] as string);
  else if (op.method === 'GET') parts.push('Read-only.');
  else if (op.method === 'DELETE') parts.push('Deletes the record; it cannot be undone.');
  else parts.push(`Changes server state (${op.method} ${op.path}).`);
  if (paged) parts.push('Answers one page {data, total, page, per_page}; pass page to read further pages.');
  if (op.admin) parts.push('Needs an admin API key.');
  return parts.join(' ');
}

/** One tool per operation; its input schema is the operation's parameters and body fields, flattened. */
export function toolOf(op: OperationSpec): ToolSpec {
  const properties: Record<string, unknown> = {};
  const required = new Set<string>();
  const placement: ToolSpec['placement'] = {};
  for (const p of op.pathParams) {
    properties[p.name] = {
      ...(p.schema as Schema),
      ...(p.description ? { description: p.description } : {}),
    };
    required.add(p.name);
    placement[p.name] = 'path';
  }
  for (const p of op.queryParams) {
    properties[p.name] = {
      ...(p.schema as Schema),
      ...(p.description ? { description: p.description } : {}),
    };
    if (p.required) required.add(p.name);
    placement[p.name] = 'query';
  }
  const body = op.body?.schema as Schema | undefined;
  const fields = body?.type === 'object' && body.properties ? Object.entries(body.properties) : undefined;
  if (op.body && fields?.every(([name]) => !(name in properties))) {
    for (const [name, schema] of fields) {
      properties[name] = schema;
      placement[name] = 'body-field';
    }
    if (op.body.required) for (const name of body?.required ?? []) required.add(name);
  } else if (op.body) {
    properties.body = op.body.schema;
    placement.body = 'body';
    if (op.body.required) required.add('body');
  }
  for (const name of REQUIRED[op.operationId] ?? []) required.add(name);
  const name = toolNameOf(op);
  const paged =
    op.queryParams.some((p) => p.name === 'page') && op.queryParams.some((p) => p.name === 'per_page');
  const readOnly = op.method === 'GET';
  return {
    name,
    title: op.summary || name,
    description: describe(op, paged),
    inputSchema: {
      type: 'object',
      properties,
      ...(required.size > 0 ? { required: [...required] } : {}),
      additionalProperties: false,
    },
    annotations: {
      title: op.summary || name,
      readOnlyHint: readOnly,
      destructiveHint:
        !readOnly && (op.method === 'DELETE' || op.method === 'PUT' || DESTRUCTIVE.test(op.operationId)),
      idempotentHint: readOnly || op.method === 'PUT' || op.method === 'DELETE',
      // The tools act on one certwright server, not on an open world of resources.
      openWorldHint: false,
    },
    operation: op,
    placement,
  };
}

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
