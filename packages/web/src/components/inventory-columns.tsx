import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import type { Response200 } from '../api';
import { Expiry } from '../expiry';
import { Named, type Names, nameOf, type Ref } from '../names';
import { DateTime, StatusBadge } from './common';
import type { Column } from './table';

export type Cert = Response200<'/api/v1/certificates'>['data'][number];

interface InventoryColumn {
  id: string;
  header: string;
  sort?: string;
  render: (c: Cert, names: Names | undefined) => React.ReactNode;
}

/** Every column the inventory can show; the user picks which and in what order. */
export const INVENTORY_COLUMNS: readonly InventoryColumn[] = [
  {
    id: 'name',
    header: 'Name',
    sort: 'name',
    render: (c) => (
      <Link to="/certificates/$id" params={{ id: c.id }}>
        {c.name}
      </Link>
    ),
  },
  { id: 'cn', header: 'Common name', sort: 'common_name', render: (c) => c.common_name },
  { id: 'status', header: 'Status', sort: 'status', render: (c) => <StatusBadge status={c.status} /> },
  { id: 'expires', header: 'Expires', sort: 'expires_at', render: (c) => <Expiry value={c.expires_at} /> },
  { id: 'issuer', header: 'Issuer', render: (c, n) => <Named names={n} kind="issuer" id={c.issuer_id} /> },
  { id: 'owner', header: 'Owner', render: (c, n) => <Named names={n} kind="owner" id={c.owner_id} /> },
  { id: 'team', header: 'Team', render: (c, n) => <Named names={n} kind="team" id={c.team_id} /> },
  { id: 'source', header: 'Source', render: (c) => c.source || '—' },
  { id: 'env', header: 'Environment', render: (c) => c.environment ?? '—' },
  { id: 'sans', header: 'SANs', render: (c) => c.sans.join(', ') || '—' },
  {
    id: 'profile',
    header: 'Profile',
    render: (c, n) => <Named names={n} kind="profile" id={c.profile_id} />,
  },
  {
    id: 'policy',
    header: 'Renewal policy',
    render: (c, n) => <Named names={n} kind="renewal_policy" id={c.renewal_policy_id} />,
  },
  { id: 'created', header: 'Created', sort: 'created_at', render: (c) => <DateTime value={c.created_at} /> },
];

export const DEFAULT_COLUMNS: readonly string[] = [
  'name',
  'cn',
  'status',
  'expires',
  'issuer',
  'owner',
  'team',
  'source',
  'env',
];

const STORAGE_KEY = 'certwright.inventory.columns';
const KNOWN = new Set(INVENTORY_COLUMNS.map((c) => c.id));

/** Known column ids of a comma list, once each, in its order; null when none is left. */
export function parseColumns(text: string | null | undefined): string[] | null {
  if (!text) return null;
  const ids = [...new Set(text.split(',').map((t) => t.trim()))].filter((id) => KNOWN.has(id));
  return ids.length > 0 ? ids : null;
}

/** The columns to show: the URL's, else the last choice on this browser, else the default. */
export function chosenColumns(fromUrl: string | undefined): string[] {
  let saved: string | null = null;
  try {
    saved = localStorage.getItem(STORAGE_KEY);
  } catch {
    // Storage may be unavailable (privacy settings): the default then.
  }
  return parseColumns(fromUrl) ?? parseColumns(saved) ?? [...DEFAULT_COLUMNS];
}

export function saveColumns(ids: readonly string[]): void {
  try {
    localStorage.setItem(STORAGE_KEY, ids.join(','));
  } catch {
    // Not kept across visits; the URL still carries the choice.
  }
}

/** Table columns for the chosen ids, rendering related records by name. */
export function tableColumns(ids: readonly string[], names: Names | undefined): Column<Cert>[] {
  return ids.flatMap((id) => {
    const column = INVENTORY_COLUMNS.find((c) => c.id === id);
    if (!column) return [];
    return [
      {
        key: column.id,
        header: column.header,
        ...(column.sort ? { sort: column.sort } : {}),
        render: (c: Cert) => column.render(c, names),
      },
    ];
  });
}

/** The related records a row names, for the page's one names request. */
export function certificateRefs(c: Cert): Ref[] {
  return [
    ['issuer', c.issuer_id],
    ['owner', c.owner_id],
    ['team', c.team_id],
    ['profile', c.profile_id],
    ['renewal_policy', c.renewal_policy_id],
  ];
}

/** Show, hide and order the inventory's columns. */
export function ColumnChooser({
  value,
  onChange,
}: {
  value: readonly string[];
  onChange: (ids: string[]) => void;
}) {
  // The choices exist only while open: a closed chooser adds no "Status" or "Owner" control
  // next to the filters of the same names.
  const [open, setOpen] = useState(false);
  const hidden = INVENTORY_COLUMNS.filter((c) => !value.includes(c.id));
  const shown = value.flatMap((id) => INVENTORY_COLUMNS.filter((c) => c.id === id));
  const move = (index: number, by: -1 | 1) => {
    const next = [...value];
    const [item] = next.splice(index, 1);
    next.splice(index + by, 0, item as string);
    onChange(next);
  };
  return (
    <details className="column-chooser" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Columns</summary>
      {open ? (
        <fieldset className="plain-fieldset">
          <legend className="sr-only">Columns shown, in order</legend>
          <ol className="plain">
            {shown.map((c, i) => (
              <li key={c.id}>
                <label>
                  <input
                    type="checkbox"
                    checked
                    disabled={value.length === 1}
                    onChange={() => onChange(value.filter((id) => id !== c.id))}
                  />{' '}
                  {c.header}
                </label>
                <span className="row-actions">
                  <button
                    type="button"
                    className="button small"
                    aria-label={`Move ${c.header} left`}
                    disabled={i === 0}
                    onClick={() => move(i, -1)}
                  >
                    ←
                  </button>
                  <button
                    type="button"
                    className="button small"
                    aria-label={`Move ${c.header} right`}
                    disabled={i === shown.length - 1}
                    onClick={() => move(i, 1)}
                  >
                    →
                  </button>
                </span>
              </li>
            ))}
            {hidden.map((c) => (
              <li key={c.id}>
                <label>
                  <input type="checkbox" checked={false} onChange={() => onChange([...value, c.id])} />{' '}
                  {c.header}
                </label>
              </li>
            ))}
          </ol>
          <button type="button" className="button" onClick={() => onChange([...DEFAULT_COLUMNS])}>
            Default columns
          </button>
        </fieldset>
      ) : null}
    </details>
  );
}

/**
 * The filters a link set (an owner's, a team's or an issuer's certificates), by name, each
 * removable: the search form has no input for them, so the list says what narrows it.
 */
const RECORD_FILTERS = [
  ['owner_id', 'owner', 'Owner'],
  ['team_id', 'team', 'Team'],
  ['issuer_id', 'issuer', 'Issuer'],
] as const;
type FilterSearch = { owner_id?: string; team_id?: string; issuer_id?: string };

/** The records the URL's filters name, for the page's one names request. */
export const filterRefs = (search: FilterSearch): Ref[] =>
  RECORD_FILTERS.filter(([key]) => search[key]).map(([key, kind]) => [kind, search[key]]);

export function RecordFilters({
  search,
  names,
  onRemove,
}: {
  search: FilterSearch;
  names: Names | undefined;
  onRemove: (key: 'owner_id' | 'team_id' | 'issuer_id') => void;
}) {
  const filters = RECORD_FILTERS.filter(([key]) => search[key]);
  if (filters.length === 0) return null;
  return (
    <p className="record-filters">
      Showing certificates of{' '}
      {filters.map(([key, kind, label], i) => (
        <span key={key}>
          {i > 0 ? ', ' : ''}
          {label.toLowerCase()} <strong>{nameOf(names, kind, search[key]) ?? search[key]}</strong>{' '}
          <button
            type="button"
            className="button small"
            aria-label={`Remove the ${label.toLowerCase()} filter`}
            onClick={() => onRemove(key)}
          >
            ×
          </button>
        </span>
      ))}
    </p>
  );
}
