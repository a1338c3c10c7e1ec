import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useId, useState } from 'react';
import { api } from '../api';

/**
 * One way to choose a reference record (issuer, owner, team, renewal policy, profile) however many
 * exist: a search box asks the list route for names containing the text (its `search` parameter,
 * server-side), and a select offers the first matches. The chosen record stays offered while
 * the search moves on, read by id when it is not among the matches, so the select never shows
 * another value than the form holds.
 */

interface Choice {
  id: string;
  name: string;
}
interface Found {
  data: Choice[];
  total: number;
}

/** How many matches the select offers; typing narrows the rest. */
export const PICKER_PAGE = 20;
/** Pause after the last keystroke before asking the server. */
const SEARCH_DELAY_MS = 250;

const list = (search: string) => ({
  query: { page: 1, per_page: PICKER_PAGE, ...(search ? { search } : {}) },
});
const byId = (id: string) => ({ params: { id } });

const RESOURCES = {
  issuers: {
    plural: 'issuers',
    singular: 'issuer',
    find: (s: string): Promise<Found> => api.get('/api/v1/issuers', list(s)),
    get: (id: string): Promise<Choice> => api.get('/api/v1/issuers/{id}', byId(id)),
  },
  owners: {
    plural: 'owners',
    singular: 'owner',
    find: (s: string): Promise<Found> => api.get('/api/v1/owners', list(s)),
    get: (id: string): Promise<Choice> => api.get('/api/v1/owners/{id}', byId(id)),
  },
  teams: {
    plural: 'teams',
    singular: 'team',
    find: (s: string): Promise<Found> => api.get('/api/v1/teams', list(s)),
    get: (id: string): Promise<Choice> => api.get('/api/v1/teams/{id}', byId(id)),
  },
  'renewal-policies': {
    plural: 'renewal policies',
    singular: 'renewal policy',
    find: (s: string): Promise<Found> => api.get('/api/v1/renewal-policies', list(s)),
    get: (id: string): Promise<Choice> => api.get('/api/v1/renewal-policies/{id}', byId(id)),
  },
  profiles: {
    plural: 'profiles',
    singular: 'profile',
    find: (s: string): Promise<Found> => api.get('/api/v1/profiles', list(s)),
    get: (id: string): Promise<Choice> => api.get('/api/v1/profiles/{id}', byId(id)),
  },
} as const;

export type PickerResource = keyof typeof RESOURCES;

/** The text after the user stopped typing for `ms`. */
function useSettled(text: string, ms: number): string {
  const [settled, setSettled] = useState(text);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(text), ms);
    return () => clearTimeout(timer);
  }, [text, ms]);
  return settled;
}

export function Picker({
  resource,
  label,
  value,
  onChange,
  emptyLabel = '— choose —',
  hint,
}: {
  resource: PickerResource;
  label: string;
  /** The chosen id, '' for none. */
  value: string;
  onChange: (id: string) => void;
  /** What the empty choice reads ('none', 'Any', …). */
  emptyLabel?: string;
  hint?: string;
}) {
  const r = RESOURCES[resource];
  const id = useId();
  const [text, setText] = useState('');
  const search = useSettled(text.trim(), SEARCH_DELAY_MS);
  const found = useQuery({
    queryKey: [resource, 'picker', search],
    placeholderData: keepPreviousData,
    queryFn: () => r.find(search),
  });
  const matches = found.data?.data ?? [];
  const missing = value !== '' && found.data !== undefined && !matches.some((m) => m.id === value);
  const chosen = useQuery({
    queryKey: [resource, 'picker-chosen', value],
    enabled: missing,
    queryFn: () => r.get(value),
  });
  const offered = missing ? [{ id: value, name: chosen.data?.name ?? value }, ...matches] : matches;
  const total = found.data?.total ?? 0;
  const status =
    found.data === undefined
      ? `Loading ${r.plural}…`
      : total > matches.length
        ? `${matches.length} of ${total} ${r.plural} shown; type to narrow.`
        : `${total} ${total === 1 ? r.singular : r.plural}${search ? ` matching “${search}”` : ''}.`;
  return (
    <div className="field picker">
      <label htmlFor={`${id}-select`}>{label}</label>
      {hint ? (
        <span className="hint" id={`${id}-hint`}>
          {hint}
        </span>
      ) : null}
      <input
        type="search"
        aria-label={`Search ${r.plural}`}
        aria-controls={`${id}-select`}
        value={text}
        placeholder={`Search ${r.plural}`}
        onChange={(e) => setText(e.target.value)}
      />
      <select
        id={`${id}-select`}
        aria-describedby={hint ? `${id}-hint ${id}-status` : `${id}-status`}
        value={value}
        onChange={(e) => onChange(e.target.value)}
      >
        <option value="">{emptyLabel}</option>
        {offered.map((c) => (
          <option key={c.id} value={c.id}>
            {c.name}
          </option>
        ))}
      </select>
      <span className="hint" id={`${id}-status`} role="status">
        {found.isError ? `Could not load ${r.plural}.` : status}
      </span>
    </div>
  );
}
