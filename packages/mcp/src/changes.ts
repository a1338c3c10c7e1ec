import { type CertwrightClient, operations, ProblemError } from '@certwright/client';
import type { ToolSpec } from './tools.js';

/**
 * What a destructive call would change, in one or two sentences a user can agree to: the
 * operation, the record it acts on (read through the matching GET, so the name is shown and not
 * only the id), and for updates the fields that would get new values. Reading changes nothing.
 */
export async function describeChange(
  client: CertwrightClient,
  tool: ToolSpec,
  args: Record<string, unknown>,
): Promise<string> {
  const op = tool.operation;
  const action = op.summary.split(/[;:(]/)[0]?.trim() ?? tool.title;
  if (BULK.has(op.operationId)) return `${action}: ${await describeSelection(client, args, op.operationId)}`;
  const pathArgs = op.pathParams.map((p) => args[p.name]).filter((v): v is string => typeof v === 'string');
  const record = await currentRecord(client, op.path, pathArgs);
  const what = record ? recordLabel(record, pathArgs) : pathArgs.join(' / ');
  const parts = [`${action}${what ? `: ${what}` : ''}`];
  if ((op.method === 'PUT' || op.method === 'PATCH') && record) {
    const changed = Object.entries(args)
      .filter(([name]) => tool.placement[name] === 'body-field')
      .filter(([name, value]) => JSON.stringify(record[name]) !== JSON.stringify(value))
      .map(([name, value]) => `${name} ${short(record[name])} → ${short(value)}`);
    parts.push(changed.length > 0 ? `changes ${changed.join(', ')}` : 'no field would get a new value');
  } else {
    const given = Object.entries(args).filter(
      ([name]) => tool.placement[name] === 'body-field' || tool.placement[name] === 'query',
    );
    if (given.length > 0) parts.push(`with ${given.map(([k, v]) => `${k} ${short(v)}`).join(', ')}`);
  }
  return parts.join('; ');
}

const BULK = new Set([
  'bulkRevokeCertificates',
  'bulkRenewCertificates',
  'bulkReassignCertificates',
  'estBulkRevokeCertificates',
]);

const short = (value: unknown) => {
  const text = value === undefined ? 'unset' : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
};

function recordLabel(record: Record<string, unknown>, ids: string[]): string {
  const id = typeof record.id === 'string' ? record.id : ids.join(' / ');
  const name = typeof record.name === 'string' && record.name !== id ? ` "${record.name}"` : '';
  const cn =
    typeof record.common_name === 'string' && record.common_name !== record.name
      ? ` (${record.common_name})`
      : '';
  const status = typeof record.status === 'string' ? `, now ${record.status}` : '';
  return `${id}${name}${cn}${status}`;
}

/** The record a path names: the GET of the same path, or of the path without its action segment. */
async function currentRecord(
  client: CertwrightClient,
  path: string,
  ids: string[],
): Promise<Record<string, unknown> | undefined> {
  if (ids.length === 0) return undefined;
  const candidates = [path, path.replace(/\/[a-z-]+$/, '')];
  for (const candidate of candidates) {
    const get = [...operations.values()].find((o) => o.method === 'GET' && o.path === candidate);
    if (!get || get.pathParams.length !== ids.length) continue;
    try {
      const answer = await client.callRaw(get.operationId, {
        path: Object.fromEntries(get.pathParams.map((p, i) => [p.name, ids[i]])),
      });
      return answer !== null && typeof answer === 'object' && !Array.isArray(answer)
        ? (answer as Record<string, unknown>)
        : undefined;
    } catch (error) {
      // A missing record: the call itself will answer 404, and nothing changes.
      if (error instanceof ProblemError && error.status === 404) return undefined;
      throw error;
    }
  }
  return undefined;
}

const FILTERS = ['profile_id', 'owner_id', 'agent_id', 'issuer_id', 'team_id', 'source'];

/** How many certificates bulk criteria select, and the first of them. */
async function describeSelection(
  client: CertwrightClient,
  args: Record<string, unknown>,
  operationId: string,
): Promise<string> {
  const ids = Array.isArray(args.certificate_ids) ? (args.certificate_ids as string[]) : [];
  const query: Record<string, unknown> = Object.fromEntries(
    FILTERS.filter(
      (f) => args[f] !== undefined && args[f] !== '' && operationId !== 'bulkReassignCertificates',
    ).map((f) => [f, args[f]]),
  );
  if (operationId === 'estBulkRevokeCertificates') query.source = 'EST';
  const target =
    operationId === 'bulkReassignCertificates'
      ? ` to owner ${args.owner_id}${args.team_id ? ` and team ${args.team_id}` : ''}`
      : args.reason
        ? ` (reason ${args.reason})`
        : '';
  const narrowing = Object.keys(query).some((f) => f !== 'source');
  if (!narrowing) {
    return `${ids.length} certificate${ids.length === 1 ? '' : 's'} by id (${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', …' : ''})${target}`;
  }
  const criteria = Object.entries(query)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  if (ids.length > 0) return `those of the ${ids.length} listed certificates that have ${criteria}${target}`;
  const page = (await client.callRaw('listCertificates', { query: { ...query, per_page: 10 } })) as {
    data: { id: string; name: string }[];
    total: number;
    total_estimated?: boolean;
  };
  const first = page.data.map((c) => `${c.id} "${c.name}"`).join(', ');
  return `the ${page.total_estimated ? 'about ' : ''}${page.total} certificate${page.total === 1 ? '' : 's'} with ${criteria}${target}${first ? `, such as ${first}` : ''}`;
}
