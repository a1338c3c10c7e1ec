import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import type { Response200 } from '../api';
import { BulkActions } from '../components/bulk-actions';
import { DateTime, ErrorBox, Loading, StatusBadge } from '../components/common';
import { NewCertificate } from '../components/new-certificate';
import { type Column, DataTable, Pager } from '../components/table';
import { INVENTORY_PER_PAGE, inventoryQuery } from '../inventory-query';
import { CERT_STATUSES, type InventorySearch } from '../router';

type Cert = Response200<'/api/v1/certificates'>['data'][number];

const columns: Column<Cert>[] = [
  {
    key: 'name',
    header: 'Name',
    sort: 'name',
    render: (c) => (
      <Link to="/certificates/$id" params={{ id: c.id }}>
        {c.name}
      </Link>
    ),
  },
  { key: 'cn', header: 'Common name', sort: 'common_name', render: (c) => c.common_name },
  { key: 'status', header: 'Status', sort: 'status', render: (c) => <StatusBadge status={c.status} /> },
  { key: 'expires', header: 'Expires', sort: 'expires_at', render: (c) => <DateTime value={c.expires_at} /> },
  { key: 'env', header: 'Environment', render: (c) => c.environment ?? '—' },
  { key: 'source', header: 'Source', render: (c) => c.source || '—' },
];

/** The inventory: server-side filtering, sorting and paging; every filter is in the URL. */
export default function Certificates() {
  const search = useSearch({ from: '/app/certificates' }) as InventorySearch;
  const navigate = useNavigate({ from: '/certificates' });
  const [text, setText] = useState(search.search ?? '');
  const [selected, setSelected] = useState<Map<string, string>>(new Map());
  const toggle = (c: Cert, on: boolean) => {
    const next = new Map(selected);
    if (on) next.set(c.id, c.name);
    else next.delete(c.id);
    setSelected(next);
  };
  const page = search.page ?? 1;
  const list = useQuery({ ...inventoryQuery(search), placeholderData: keepPreviousData });
  const update = (next: Partial<InventorySearch>) =>
    navigate({ search: (prev: InventorySearch) => ({ ...prev, page: undefined, ...next }) });
  const onSearch = (event: FormEvent) => {
    event.preventDefault();
    void update({ search: text.trim() || undefined });
  };
  const status = search.status?.[0] ?? '';
  return (
    <>
      <h1>Certificates</h1>
      <NewCertificate />
      <form className="filters" onSubmit={onSearch} aria-label="Filter certificates">
        <label>
          Search
          <input value={text} onChange={(e) => setText(e.target.value)} placeholder="name, CN or SAN" />
        </label>
        <label>
          Status
          <select
            value={status}
            onChange={(e) =>
              void update({
                status: e.target.value ? [e.target.value as (typeof CERT_STATUSES)[number]] : undefined,
              })
            }
          >
            <option value="">Any</option>
            {CERT_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Environment
          <input
            defaultValue={search.environment ?? ''}
            onBlur={(e) => void update({ environment: e.target.value.trim() || undefined })}
          />
        </label>
        <button type="submit" className="button primary">
          Apply
        </button>
        <button
          type="button"
          className="button"
          onClick={() => {
            setText('');
            void navigate({ search: {} });
          }}
        >
          Clear filters
        </button>
      </form>
      {list.isPending ? <Loading what="Loading certificates" /> : null}
      {list.isError ? <ErrorBox error={list.error} /> : null}
      {list.data ? (
        <>
          <BulkActions
            selected={[...selected].map(([id, name]) => ({ id, name }))}
            onDone={() => setSelected(new Map())}
          />
          <DataTable
            caption="Certificates"
            columns={[
              {
                key: 'select',
                header: 'Select',
                render: (c) => (
                  <input
                    type="checkbox"
                    aria-label={`Select ${c.name}`}
                    checked={selected.has(c.id)}
                    onChange={(e) => toggle(c, e.target.checked)}
                  />
                ),
              },
              ...columns,
            ]}
            rows={list.data.data}
            rowKey={(c) => c.id}
            sort={search.sort ?? 'created_at'}
            order={search.order ?? (search.sort ? 'asc' : 'desc')}
            onSort={(sort, order) => void update({ sort: sort as InventorySearch['sort'], order })}
            empty="No certificate matches these filters."
          />
          <Pager
            page={page}
            perPage={INVENTORY_PER_PAGE}
            total={list.data.total}
            onPage={(p) =>
              void navigate({ search: (prev: InventorySearch) => ({ ...prev, page: p > 1 ? p : undefined }) })
            }
          />
        </>
      ) : null}
    </>
  );
}
