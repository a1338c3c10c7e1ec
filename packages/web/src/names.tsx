import { keepPreviousData, useQuery } from '@tanstack/react-query';
import './components/data-views.css';
import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { api } from './api';

/** The kinds `GET /api/v1/names` answers (docs/api/inventory.md#names). */
export type NamedKind =
  | 'certificate'
  | 'issuer'
  | 'owner'
  | 'team'
  | 'profile'
  | 'renewal_policy'
  | 'policy_rule'
  | 'agent'
  | 'target'
  | 'webhook'
  | 'scan_target'
  | 'health_check'
  | 'user';

const KINDS: readonly NamedKind[] = [
  'certificate',
  'issuer',
  'owner',
  'team',
  'profile',
  'renewal_policy',
  'policy_rule',
  'agent',
  'target',
  'webhook',
  'scan_target',
  'health_check',
  'user',
];

/** One related record a row shows: its kind and id (null and undefined are skipped). */
export type Ref = readonly [NamedKind, string | null | undefined];

/** The API's answer, per kind; `withheld` kinds are those the caller may not read. */
export interface Names {
  names: Partial<Record<NamedKind, Record<string, string>>>;
  withheld: NamedKind[];
}

/** The distinct ids per kind of the refs, sorted (a stable query key), at most 100 per kind. */
export function idsByKind(refs: Iterable<Ref>): Partial<Record<NamedKind, string[]>> {
  const sets = new Map<NamedKind, Set<string>>();
  for (const [kind, id] of refs) {
    if (!id) continue;
    const set = sets.get(kind) ?? new Set<string>();
    set.add(id);
    sets.set(kind, set);
  }
  const out: Partial<Record<NamedKind, string[]>> = {};
  for (const kind of KINDS) {
    const set = sets.get(kind);
    if (set) out[kind] = [...set].sort().slice(0, 100);
  }
  return out;
}

/**
 * The names of every record a page of rows refers to, in one request for the whole page (not
 * one per row). `refsOf` lists a row's related records.
 */
export function useNames<T>(
  rows: readonly T[] | undefined,
  refsOf: (row: T) => readonly Ref[],
  /** Records the page names besides its rows (a filter's owner …), in the same request. */
  extra: readonly Ref[] = [],
) {
  const query = idsByKind([...(rows ?? []).flatMap(refsOf), ...(rows ? extra : [])]);
  const any = Object.keys(query).length > 0;
  const names = useQuery({
    queryKey: ['names', query],
    enabled: any,
    staleTime: 30_000,
    placeholderData: keepPreviousData,
    queryFn: async (): Promise<Names> => {
      const answer = await api.get('/api/v1/names', { query });
      return answer as Names;
    },
  });
  return names.data;
}

/** The name of one record, when the answer has it. */
export function nameOf(names: Names | undefined, kind: NamedKind, id: string | null | undefined) {
  return id ? names?.names[kind]?.[id] : undefined;
}

/** Where a record of each kind is shown: its own page where there is one, else its list. */
function linkTo(kind: NamedKind, id: string, label: ReactNode): ReactNode {
  switch (kind) {
    case 'certificate':
      return (
        <Link to="/certificates/$id" params={{ id }}>
          {label}
        </Link>
      );
    case 'issuer':
      return (
        <Link to="/issuers/$id" params={{ id }}>
          {label}
        </Link>
      );
    case 'health_check':
      return (
        <Link to="/health-checks/$id" params={{ id }}>
          {label}
        </Link>
      );
    case 'owner':
      return (
        <Link to="/certificates" search={{ owner_id: id }} title="certificates of this owner">
          {label}
        </Link>
      );
    case 'team':
      return (
        <Link to="/certificates" search={{ team_id: id }} title="certificates of this team">
          {label}
        </Link>
      );
    case 'agent':
      return <Link to="/agents">{label}</Link>;
    case 'target':
      return <Link to="/targets">{label}</Link>;
    case 'webhook':
      return <Link to="/alerts/notifications">{label}</Link>;
    case 'scan_target':
      return <Link to="/discovery/targets">{label}</Link>;
    case 'profile':
      return <Link to="/profiles">{label}</Link>;
    case 'renewal_policy':
      return <Link to="/renewal-policies">{label}</Link>;
    case 'policy_rule':
      return <Link to="/policies">{label}</Link>;
    case 'user':
      return <Link to="/people/users">{label}</Link>;
  }
}

/**
 * A related record by name, linked to where it is shown. While the names are loading the cell
 * says so; a record that no longer exists says "deleted"; a kind the caller may not read shows
 * the id with the reason (there is no name to show).
 */
export function Named({
  names,
  kind,
  id,
}: {
  names: Names | undefined;
  kind: NamedKind;
  id: string | null | undefined;
}) {
  if (!id) return <span className="muted">—</span>;
  const name = nameOf(names, kind, id);
  if (name !== undefined) return <>{linkTo(kind, id, name)}</>;
  if (!names) return <span className="muted">…</span>;
  if (names.withheld.includes(kind))
    return (
      <code className="muted" title="you may not read the name of this record">
        {id}
      </code>
    );
  return (
    <span className="muted" title={id}>
      deleted
    </span>
  );
}

/** Audit actor types as the API records them (`api_key` for the admin key). */
export function actorRef(actorType: string, actor: string): Ref | null {
  if (actorType === 'user') return ['user', actor];
  if (actorType === 'agent') return ['agent', actor];
  return null;
}

/** Who did it, once: `admin (API key)`, a user's or an agent's name, `system (<what>)`. */
export function Actor({ names, type, id }: { names: Names | undefined; type: string; id: string }) {
  if (type === 'api_key') return <>admin (API key)</>;
  if (type === 'anonymous') return <>anonymous</>;
  if (type === 'system') return <>system ({id})</>;
  const ref = actorRef(type, id);
  if (!ref) return <>{id}</>;
  return <Named names={names} kind={ref[0]} id={id} />;
}

/** The records an audit event names: its resource and, for a user or an agent, its actor. */
export function auditRefs(e: {
  resource_type: string;
  resource_id: string;
  actor_type: string;
  actor: string;
}) {
  const refs: Ref[] = [];
  const kind = kindOfResource(e.resource_type);
  if (kind) refs.push([kind, e.resource_id]);
  const actor = actorRef(e.actor_type, e.actor);
  if (actor) refs.push(actor);
  return refs;
}

/** The named kind of an audit event's `resource_type`, where it has one. */
export function kindOfResource(resourceType: string): NamedKind | null {
  const kind = resourceType as NamedKind;
  return KINDS.includes(kind) ? kind : null;
}

/** An audit event's resource: its kind, then the record by name where it has one. */
export function Resource({ type, id, names }: { type: string; id: string; names: Names | undefined }) {
  const kind = kindOfResource(type);
  return (
    <>
      {type.replace(/_/g, ' ')}{' '}
      {kind ? <Named names={names} kind={kind} id={id} /> : <code className="muted">{id}</code>}
    </>
  );
}
