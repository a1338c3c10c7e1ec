import type { CertwrightClient } from '@certwright/client';
import type { Names } from './output.js';

/** Reference fields a table shows by name, and the operation that reads the referenced record. */
const GETTERS: Record<string, string> = {
  owner_id: 'getOwner',
  team_id: 'getTeam',
  issuer_id: 'getIssuer',
  renewal_policy_id: 'getRenewalPolicy',
  agent_id: 'getAgent',
  target_id: 'getTarget',
  certificate_id: 'getCertificate',
  rule_id: 'getPolicyRule',
  // Certificate profiles only: ACME, EST and SCEP records name protocol profiles with this field.
  profile_id: 'getProfile',
};

/** Enough lookups for a page of a few hundred rows; beyond, the ids are shown as they are. */
const MAX_LOOKUPS = 200;
const PARALLEL = 8;

/**
 * The names of the records the shown columns reference, read with one GET per distinct id. A
 * record that cannot be read (deleted, not permitted) keeps its id: names are a courtesy.
 */
export async function resolveNames(
  client: CertwrightClient,
  rows: Record<string, unknown>[],
  columns: string[],
): Promise<Names> {
  const wanted: [string, string][] = [];
  for (const column of columns) {
    const getter = GETTERS[column];
    if (!getter) continue;
    const ids = new Set<string>();
    for (const row of rows) {
      if (column === 'profile_id' && !('common_name' in row)) continue;
      const value = row[column];
      if (typeof value === 'string' && value !== '') ids.add(value);
    }
    for (const id of ids) wanted.push([column, id]);
  }
  const names: Names = new Map();
  const queue = wanted.slice(0, MAX_LOOKUPS);
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [column, id] = next;
      try {
        const record = (await client.callRaw(GETTERS[column] as string, { path: { id } })) as {
          name?: unknown;
        };
        if (typeof record?.name === 'string' && record.name !== '') {
          if (!names.has(column)) names.set(column, new Map());
          names.get(column)?.set(id, record.name);
        }
      } catch {
        // The id stays.
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return names;
}
