import type { OperationSpec } from '@certwright/client';

/** Where an operation lives in the command tree: `certwright <group> <command>`. */
export interface CommandName {
  group: string;
  command: string;
  /** A boolean flag of another command that selects this operation (`agents list --retired`). */
  variantOf?: { command: string; flag: string; description: string };
}

/** Groups named as operators say them; unknown tags (new routes) get their tag, slugged. */
const GROUP_OF_TAG: Record<string, string> = {
  certificates: 'certs',
  bulk: 'certs',
  'EST administration': 'est',
  'network scan': 'scep',
  'SCEP administration': 'scep',
  auth: 'system',
};

/** The words an operationId repeats from its group, dropped from the command name. */
const NOUNS: Record<string, string[]> = {
  certs: ['certificate', 'certificates'],
  agents: ['agent', 'agents'],
  policies: ['policy', 'policies', 'rule', 'rules'],
  'renewal-policies': ['renewal', 'policy', 'policies', 'policys'],
  audit: ['audit'],
  acme: ['acme'],
  est: ['est', 'admin'],
  dashboard: ['dashboard'],
  scep: ['scep', 'admin'],
};

const OVERRIDES: Record<string, CommandName> = {
  getVersion: { group: 'system', command: 'version' },
  getAuthInfo: { group: 'system', command: 'auth-info' },
  getOpenApi: { group: 'system', command: 'openapi' },
  estBulkRevokeCertificates: { group: 'est', command: 'bulk-revoke' },
  listRetiredAgents: {
    group: 'agents',
    command: 'list-retired',
    variantOf: {
      command: 'list',
      flag: 'retired',
      description: 'list retired agents instead of active ones',
    },
  },
};

const words = (id: string) =>
  id.match(/[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])/g)?.map((w) => w.toLowerCase()) ?? [id];

export const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

export function commandNameOf(op: OperationSpec): CommandName {
  const override = OVERRIDES[op.operationId];
  if (override) return override;
  const tag = op.tags[0] ?? 'misc';
  const group = GROUP_OF_TAG[tag] ?? slug(tag);
  const nouns = new Set([...(NOUNS[group] ?? []), group, group.replace(/s$/, '')]);
  const kept = words(op.operationId).filter((w) => !nouns.has(w));
  return { group, command: kept.length > 0 ? kept.join('-') : words(op.operationId).join('-') };
}

/** Every operation's place, unique: a clash falls back to the operationId in kebab case. */
export function commandTable(ops: readonly OperationSpec[]): Map<string, CommandName> {
  const table = new Map<string, CommandName>();
  const taken = new Set<string>();
  for (const op of ops) {
    let name = commandNameOf(op);
    if (taken.has(`${name.group} ${name.command}`))
      name = { group: name.group, command: words(op.operationId).join('-') };
    taken.add(`${name.group} ${name.command}`);
    table.set(op.operationId, name);
  }
  return table;
}
