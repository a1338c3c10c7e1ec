import { useQuery } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import type { NavGroup } from '../navigation';

/** One thing the palette can open: a page, or a record found by the API. */
interface Hit {
  key: string;
  label: string;
  kind: string;
  to: string;
  search?: Record<string, string>;
  params?: Record<string, string>;
}

const PER_KIND = 5;

/** Waits until typing pauses, so each pause costs one request per kind, not one per key. */
function useSettled(value: string, ms = 200): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** Six or more hex digits, optionally in colon-separated pairs: what openssl prints as a serial. */
const SERIAL = /^(?:[0-9a-f]{6,}|[0-9a-f]{2}(?::[0-9a-f]{2}){2,})$/i;

/** The records matching `term` that the caller may read, a few of each kind. */
function useRecordHits(term: string, open: boolean): { hits: Hit[]; busy: boolean } {
  const certs = usePermission('cert.read').allowed;
  const owners = usePermission('owner.read').allowed;
  const teams = usePermission('team.read').allowed;
  const issuers = usePermission('issuer.read').allowed;
  const agents = usePermission('agent.read').allowed;
  const on = open && term.length >= 2;
  const page = { page: 1, per_page: PER_KIND };
  const q = {
    certs: useQuery({
      queryKey: ['palette', 'certificates', term],
      enabled: on && certs,
      queryFn: () => api.get('/api/v1/certificates', { query: { ...page, search: term } }),
    }),
    // A term that reads as a serial number (hex, colons allowed) is looked up as one too.
    bySerial: useQuery({
      queryKey: ['palette', 'serial', term],
      enabled: on && certs && SERIAL.test(term),
      queryFn: () => api.get('/api/v1/certificates', { query: { ...page, serial: term } }),
    }),
    owners: useQuery({
      queryKey: ['palette', 'owners', term],
      enabled: on && owners,
      queryFn: () => api.get('/api/v1/owners', { query: { ...page, search: term } }),
    }),
    teams: useQuery({
      queryKey: ['palette', 'teams', term],
      enabled: on && teams,
      queryFn: () => api.get('/api/v1/teams', { query: { ...page, search: term } }),
    }),
    issuers: useQuery({
      queryKey: ['palette', 'issuers', term],
      enabled: on && issuers,
      queryFn: () => api.get('/api/v1/issuers', { query: { ...page, search: term } }),
    }),
    // The agent list has no text filter: its first page is matched here (fleets are small).
    agents: useQuery({
      queryKey: ['palette', 'agents'],
      enabled: on && agents,
      staleTime: 30_000,
      queryFn: () => api.get('/api/v1/agents', { query: { page: 1, per_page: 100 } }),
    }),
  };
  const lower = term.toLowerCase();
  const hits: Hit[] = [
    ...(q.certs.data?.data ?? []).map((c) => ({
      key: `cert-${c.id}`,
      label: c.common_name && c.common_name !== c.name ? `${c.name} (${c.common_name})` : c.name,
      kind: 'Certificate',
      to: '/certificates/$id',
      params: { id: c.id },
    })),
    ...(q.bySerial.data?.data ?? [])
      .filter((c) => !(q.certs.data?.data ?? []).some((other) => other.id === c.id))
      .map((c) => ({
        key: `serial-${c.id}`,
        label: `${c.name} (serial ${term})`,
        kind: 'Certificate',
        to: '/certificates/$id',
        params: { id: c.id },
      })),
    ...(q.issuers.data?.data ?? []).map((i) => ({
      key: `issuer-${i.id}`,
      label: i.name,
      kind: 'Issuer',
      to: '/issuers/$id',
      params: { id: i.id },
    })),
    ...(q.owners.data?.data ?? []).map((o) => ({
      key: `owner-${o.id}`,
      label: o.name,
      kind: 'Owner',
      to: '/certificates',
      search: { owner_id: o.id },
    })),
    ...(q.teams.data?.data ?? []).map((t) => ({
      key: `team-${t.id}`,
      label: t.name,
      kind: 'Team',
      to: '/certificates',
      search: { team_id: t.id },
    })),
    ...(on ? (q.agents.data?.data ?? []) : [])
      .filter((a) => a.name.toLowerCase().includes(lower) || a.hostname.toLowerCase().includes(lower))
      .slice(0, PER_KIND)
      .map((a) => ({ key: `agent-${a.id}`, label: a.name, kind: 'Agent', to: '/agents' })),
  ];
  const busy = on && Object.values(q).some((query) => query.isFetching);
  return { hits, busy };
}

/**
 * Ctrl-K (⌘K) opens a search over the pages and the records behind them: certificates by name,
 * CN, SAN or serial number, issuers, owners, teams and agents. Arrow keys choose, Enter opens, Escape closes.
 */
export function CommandPalette({ groups }: { groups: readonly NavGroup[] }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [active, setActive] = useState(0);
  const term = useSettled(text.trim()).slice(0, 200);
  const listId = useId();
  const titleId = useId();

  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        setOpen(true);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      element.showModal?.();
      input.current?.focus();
    }
    if (!open && element.open) element.close?.();
  }, [open]);

  const lower = text.trim().toLowerCase();
  const pages: Hit[] = groups.flatMap((group) =>
    group.items
      .filter((item) => lower === '' || `${group.label} ${item.label}`.toLowerCase().includes(lower))
      .map((item) => ({ key: `page-${item.to}`, label: item.label, kind: group.label, to: item.to })),
  );
  const records = useRecordHits(term, open);
  // Records found for an earlier text are not offered: Enter must open what the box now says.
  const settled = term === text.trim().slice(0, 200);
  const hits = [...(settled ? records.hits : []), ...pages];
  const chosen = Math.min(active, Math.max(hits.length - 1, 0));

  const close = () => {
    setOpen(false);
    setText('');
    setActive(0);
  };
  const go = (hit: Hit | undefined) => {
    if (!hit) return;
    close();
    void navigate({ to: hit.to, params: hit.params ?? {}, search: hit.search ?? {} } as never);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      setActive((chosen + 1) % Math.max(hits.length, 1));
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      setActive((chosen - 1 + hits.length) % Math.max(hits.length, 1));
    } else if (event.key === 'Enter') {
      event.preventDefault();
      go(hits[chosen]);
    }
  };
  const optionId = (index: number) => `${listId}-${index}`;

  return (
    <>
      <button type="button" className="button palette-open" onClick={() => setOpen(true)}>
        Search <kbd>Ctrl K</kbd>
      </button>
      <dialog ref={dialog} className="dialog palette" aria-labelledby={titleId} onClose={close}>
        <h2 id={titleId} className="sr-only">
          Search certificates, records and pages
        </h2>
        <input
          ref={input}
          role="combobox"
          aria-label="Search certificates, issuers, owners, teams, agents and pages"
          aria-expanded={hits.length > 0}
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={hits.length > 0 ? optionId(chosen) : undefined}
          value={text}
          placeholder="Name, CN, SAN, issuer, owner, page…"
          onChange={(event) => {
            setText(event.target.value);
            setActive(0);
          }}
          onKeyDown={onKeyDown}
        />
        <p className="muted palette-status" role="status">
          {records.busy || !settled ? 'Searching…' : `${hits.length} result${hits.length === 1 ? '' : 's'}`}
        </p>
        <div id={listId} role="listbox" aria-label="Results" className="palette-results">
          {hits.map((hit, index) => (
            // biome-ignore lint/a11y/useKeyWithClickEvents: the combobox input handles the keys (ARIA combobox pattern)
            <div
              key={hit.key}
              id={optionId(index)}
              role="option"
              tabIndex={-1}
              aria-selected={index === chosen}
              onClick={() => go(hit)}
              onMouseMove={() => setActive(index)}
            >
              <span>{hit.label}</span> <span className="muted">{hit.kind}</span>
            </div>
          ))}
        </div>
      </dialog>
    </>
  );
}
