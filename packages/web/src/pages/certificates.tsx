import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { BulkActions } from '../components/bulk-actions';
import { ErrorBox, Loading } from '../components/common';
import {
  type Cert,
  ColumnChooser,
  certificateRefs,
  chosenColumns,
  filterRefs,
  RecordFilters,
  saveColumns,
  tableColumns,
} from '../components/inventory-columns';
import { NewCertificate } from '../components/new-certificate';
import { DataTable, Pager } from '../components/table';
import { formatDate } from '../format';
import { INVENTORY_PER_PAGE, inventoryQuery } from '../inventory-query';
import { useNames } from '../names';
import { CERT_STATUSES, type InventorySearch } from '../router';

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
  // The names of every issuer, owner and team on the page, in one request.
  const names = useNames(list.data?.data, certificateRefs, filterRefs(search));
  const shown = chosenColumns(search.cols);
  const setColumns = (ids: string[]) => {
    saveColumns(ids);
    void navigate({ search: (prev: InventorySearch) => ({ ...prev, cols: ids.join(',') }) });
  };
  const update = (next: Partial<InventorySearch>) =>
    navigate({ search: (prev: InventorySearch) => ({ ...prev, page: undefined, ...next }) });
  const onSearch = (event: FormEvent) => {
    event.preventDefault();
    void update({ search: text.trim() || undefined });
  };
  // Several statuses come only from a link (the dashboard's timeline): shown as one choice.
  const several = (search.status?.length ?? 0) > 1 ? search.status!.join(', ') : null;
  const status = several ? 'several' : (search.status?.[0] ?? '');
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
                status:
                  e.target.value === 'several'
                    ? search.status
                    : e.target.value
                      ? [e.target.value as (typeof CERT_STATUSES)[number]]
                      : undefined,
              })
            }
          >
            <option value="">Any</option>
            {several ? <option value="several">{several}</option> : null}
            {CERT_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Environment
          {/* Keyed on the URL's value: "Clear filters" (or any navigation) empties the box too. */}
          <input
            key={search.environment ?? ''}
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
            void navigate({ search: search.cols ? { cols: search.cols } : {} });
          }}
        >
          Clear filters
        </button>
      </form>
      <RecordFilters search={search} names={names} onRemove={(key) => void update({ [key]: undefined })} />
      {search.expires_after || search.expires_before ? (
        <p className="record-filters">
          Expiring
          {search.expires_after ? (
            <>
              {' '}
              from <strong>{formatDate(search.expires_after)}</strong>
            </>
          ) : null}
          {search.expires_before ? (
            <>
              {' '}
              before <strong>{formatDate(search.expires_before)}</strong>
            </>
          ) : null}{' '}
          <button
            type="button"
            className="button small"
            aria-label="Remove the expiry filter"
            onClick={() => void update({ expires_after: undefined, expires_before: undefined })}
          >
            ×
          </button>
        </p>
      ) : null}
      <ColumnChooser value={shown} onChange={setColumns} />
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
                headerCell: (
                  <input
                    type="checkbox"
                    aria-label="Select every certificate on this page"
                    checked={list.data.data.length > 0 && list.data.data.every((c) => selected.has(c.id))}
                    onChange={(e) => {
                      const next = new Map(selected);
                      for (const c of list.data.data) {
                        if (e.target.checked) next.set(c.id, c.name);
                        else next.delete(c.id);
                      }
                      setSelected(next);
                    }}
                  />
                ),
                render: (c) => (
                  <input
                    type="checkbox"
                    aria-label={`Select ${c.name}`}
                    checked={selected.has(c.id)}
                    onChange={(e) => toggle(c, e.target.checked)}
                  />
                ),
              },
              ...tableColumns(shown, names),
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
