import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import { ActionButton, DateTime, ErrorBox, Loading } from '../components/common';
import { DataTable, Pager } from '../components/table';
import { download } from '../download';
import { Actor, auditRefs, Resource, useNames } from '../names';

type Category = 'cert_lifecycle' | 'auth' | 'config';
const PER_PAGE = 50;

/** The audit trail, newest first, with an NDJSON export. */
export default function Audit() {
  const exportPerm = usePermission('audit.export');
  const [page, setPage] = useState(1);
  const [category, setCategory] = useState<Category | ''>('');
  const [exportError, setExportError] = useState<unknown>(null);
  const events = useQuery({
    queryKey: ['audit', page, category],
    placeholderData: keepPreviousData,
    queryFn: () =>
      api.get('/api/v1/audit', { query: { page, per_page: PER_PAGE, ...(category ? { category } : {}) } }),
  });
  const names = useNames(events.data?.data, auditRefs);
  const exportTrail = async () => {
    setExportError(null);
    try {
      const query = category ? `?category=${category}` : '';
      await download(`/api/v1/audit/export${query}`, `audit-${new Date().toISOString().slice(0, 10)}.ndjson`);
    } catch (error) {
      setExportError(error);
    }
  };
  return (
    <>
      <h1>Audit trail</h1>
      <div className="filters">
        <label>
          Category
          <select
            value={category}
            onChange={(e) => {
              setCategory(e.target.value as Category | '');
              setPage(1);
            }}
          >
            <option value="">All</option>
            <option value="cert_lifecycle">Certificate lifecycle</option>
            <option value="auth">Authentication</option>
            <option value="config">Configuration</option>
          </select>
        </label>
        <ActionButton {...exportPerm} onClick={() => void exportTrail()}>
          Export (NDJSON, last 90 days)
        </ActionButton>
      </div>
      {exportError ? <ErrorBox error={exportError} /> : null}
      {events.isPending ? <Loading what="Loading the audit trail" /> : null}
      {events.isError ? <ErrorBox error={events.error} /> : null}
      {events.data ? (
        <>
          <DataTable
            caption="Audit events"
            rows={events.data.data}
            rowKey={(e) => e.id}
            columns={[
              { key: 'seq', header: '#', render: (e) => e.seq },
              { key: 'when', header: 'When', render: (e) => <DateTime value={String(e.occurred_at)} /> },
              { key: 'category', header: 'Category', render: (e) => e.category },
              { key: 'action', header: 'Action', render: (e) => e.action },
              {
                key: 'resource',
                header: 'Resource',
                render: (e) => <Resource type={e.resource_type} id={e.resource_id} names={names} />,
              },
              {
                key: 'actor',
                header: 'Actor',
                render: (e) => <Actor names={names} type={e.actor_type} id={e.actor} />,
              },
            ]}
          />
          <Pager page={page} perPage={PER_PAGE} total={events.data.total} onPage={setPage} />
        </>
      ) : null}
    </>
  );
}
