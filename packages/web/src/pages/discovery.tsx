import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import {
  ActionButton,
  ConfirmDialog,
  DateTime,
  ErrorBox,
  Field,
  Loading,
  Notice,
  Section,
  StatusBadge,
} from '../components/common';
import { Picker, type PickerResource } from '../components/picker';
import { DataTable, Pager } from '../components/table';
import { iso } from '../format';
import { Named, useNames } from '../names';

type Scan = Response200<'/api/v1/discovery/scans'>['data'][number];
type Found = Response200<'/api/v1/discovery/certificates'>['data'][number];

function Scans() {
  const [page, setPage] = useState(1);
  const scans = useQuery({
    queryKey: ['discovery-scans', page],
    queryFn: () => api.get('/api/v1/discovery/scans', { query: { page, per_page: 20 } }),
  });
  // A network scan names its scan target; every scan its source (the server scanner or an agent).
  const names = useNames(scans.data?.data, (s) => [
    ['scan_target', s.target_id],
    ['agent', s.source],
  ]);
  return (
    <Section title="Scans">
      {scans.isPending ? <Loading what="Loading scans" /> : null}
      {scans.isError ? <ErrorBox error={scans.error} /> : null}
      {scans.data ? (
        <>
          <DataTable<Scan>
            caption="Scans"
            rows={scans.data.data}
            rowKey={(s) => s.id}
            empty="No scans yet."
            columns={[
              { key: 'started', header: 'Started', render: (s) => <DateTime value={iso(s.started_at)} /> },
              {
                key: 'source',
                header: 'Source',
                render: (s) => <Named names={names} kind="agent" id={s.source} />,
              },
              {
                key: 'target',
                header: 'Scan target',
                render: (s) => <Named names={names} kind="scan_target" id={s.target_id} />,
              },
              { key: 'status', header: 'Status', render: (s) => <StatusBadge status={s.status} /> },
              {
                key: 'endpoints',
                header: 'Endpoints (TLS)',
                render: (s) => `${s.endpoints_total} (${s.endpoints_tls})`,
              },
              {
                key: 'found',
                header: 'Certificates (new)',
                render: (s) => `${s.certificates_found} (${s.certificates_new})`,
              },
              {
                key: 'errors',
                header: 'Errors',
                render: (s) =>
                  s.errors_count === 0
                    ? '0'
                    : `${s.errors_count}: ${s.errors
                        .slice(0, 3)
                        .map((e) => `${e.address}:${e.port} ${e.reason}`)
                        .join('; ')}`,
              },
            ]}
          />
          {(scans.data.total ?? 0) > 20 ? (
            <Pager page={page} perPage={20} total={scans.data.total ?? 0} onPage={setPage} />
          ) : null}
        </>
      ) : null}
    </Section>
  );
}

interface Claim {
  issuer_id: string;
  owner_id: string;
  team_id: string;
  name: string;
}

function ClaimDialog({ found, onClose }: { found: Found | null; onClose: (message: string) => void }) {
  const client = useQueryClient();
  const [claim, setClaim] = useState<Claim>({ issuer_id: '', owner_id: '', team_id: '', name: '' });
  const open = found !== null;
  const save = useMutation({
    mutationFn: () => {
      if (!found) throw new Error('no certificate chosen');
      const missing = (['issuer_id', 'owner_id', 'team_id'] as const).filter((k) => claim[k] === '');
      if (missing.length > 0)
        throw new Error(`choose ${missing.map((k) => k.replace('_id', '')).join(', ')} before claiming`);
      return api.post('/api/v1/discovery/certificates/{id}/claim', {
        params: { id: found.id },
        body: {
          issuer_id: claim.issuer_id,
          owner_id: claim.owner_id,
          team_id: claim.team_id,
          ...(claim.name.trim() ? { name: claim.name.trim() } : {}),
        },
      });
    },
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['discovered'] });
      onClose(`Claimed ${found?.subject ?? 'the certificate'}; it is now managed.`);
    },
  });
  const pick = (key: 'issuer_id' | 'owner_id' | 'team_id', resource: PickerResource, label: string) => (
    <Picker
      resource={resource}
      label={label}
      value={claim[key]}
      onChange={(id) => setClaim({ ...claim, [key]: id })}
    />
  );
  return (
    <ConfirmDialog
      open={open}
      title={`Claim ${found?.subject ?? ''}`}
      confirmLabel="Claim certificate"
      busy={save.isPending}
      onConfirm={() => save.mutate()}
      onCancel={() => onClose('')}
    >
      <p>The certificate becomes a managed certificate with this issuer, owner and team.</p>
      {save.isError ? <ErrorBox error={save.error} /> : null}
      <div className="form">
        {open ? (
          <>
            {pick('issuer_id', 'issuers', 'Issuer')}
            {pick('owner_id', 'owners', 'Owner')}
            {pick('team_id', 'teams', 'Team')}
          </>
        ) : null}
        <Field label="Name" hint="default: the subject common name or first SAN">
          {({ id, describedBy }) => (
            <input
              id={id}
              value={claim.name}
              aria-describedby={describedBy}
              onChange={(e) => setClaim({ ...claim, name: e.target.value })}
            />
          )}
        </Field>
      </div>
    </ConfirmDialog>
  );
}

const STATUSES = ['unmanaged', 'managed', 'dismissed'] as const;

function Found() {
  const client = useQueryClient();
  const triage = usePermission('scan.triage');
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<'' | (typeof STATUSES)[number]>('unmanaged');
  const [claiming, setClaiming] = useState<Found | null>(null);
  const [notice, setNotice] = useState('');
  const found = useQuery({
    queryKey: ['discovered', status, page],
    queryFn: () =>
      api.get('/api/v1/discovery/certificates', {
        query: { page, per_page: 25, ...(status ? { status } : {}) },
      }),
  });
  const names = useNames(found.data?.data, (f) => [['certificate', f.certificate_id]]);
  const dismiss = useMutation({
    mutationFn: (f: Found) =>
      api.post('/api/v1/discovery/certificates/{id}/dismiss', { params: { id: f.id } }),
    onSuccess: async (_, f) => {
      setNotice(`Dismissed ${f.subject}.`);
      await client.invalidateQueries({ queryKey: ['discovered'] });
    },
  });
  return (
    <Section title="Discovered certificates">
      <div className="filters">
        <Field label="Status">
          {({ id }) => (
            <select
              id={id}
              value={status}
              onChange={(e) => {
                setPage(1);
                setStatus(e.target.value as typeof status);
              }}
            >
              <option value="">any</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <Notice message={notice} />
      {dismiss.isError ? <ErrorBox error={dismiss.error} /> : null}
      {found.isPending ? <Loading what="Loading discovered certificates" /> : null}
      {found.isError ? <ErrorBox error={found.error} /> : null}
      {found.data ? (
        <>
          <DataTable<Found>
            caption="Discovered certificates"
            rows={found.data.data}
            rowKey={(f) => f.id}
            empty="No certificates found with this status."
            columns={[
              {
                key: 'subject',
                header: 'Subject',
                render: (f) => (
                  <Link to="/discovery/certificates/$id" params={{ id: f.id }}>
                    {f.subject}
                  </Link>
                ),
              },
              { key: 'issuer', header: 'Issuer', render: (f) => f.issuer },
              { key: 'expires', header: 'Expires', render: (f) => <DateTime value={iso(f.not_after)} /> },
              {
                key: 'seen',
                header: 'Seen at',
                render: (f) =>
                  f.sightings
                    .slice(0, 3)
                    .map((s) => s.path ?? `${s.address ?? ''}:${s.port ?? ''}${s.sni ? ` (${s.sni})` : ''}`)
                    .join(', ') || '—',
              },
              { key: 'status', header: 'Status', render: (f) => <StatusBadge status={f.status} /> },
              {
                key: 'managed',
                header: 'Managed as',
                render: (f) => <Named names={names} kind="certificate" id={f.certificate_id} />,
              },
              {
                key: 'actions',
                header: 'Actions',
                render: (f) =>
                  f.status === 'unmanaged' ? (
                    <span className="row-actions">
                      <ActionButton {...triage} onClick={() => setClaiming(f)}>
                        Claim
                      </ActionButton>{' '}
                      <ActionButton
                        {...triage}
                        onClick={() => dismiss.mutate(f)}
                        disabled={dismiss.isPending}
                      >
                        Dismiss
                      </ActionButton>
                    </span>
                  ) : (
                    '—'
                  ),
              },
            ]}
          />
          {(found.data.total ?? 0) > 25 ? (
            <Pager page={page} perPage={25} total={found.data.total ?? 0} onPage={setPage} />
          ) : null}
        </>
      ) : null}
      <ClaimDialog
        key={claiming?.id ?? 'none'}
        found={claiming}
        onClose={(message) => {
          setClaiming(null);
          if (message) setNotice(message);
        }}
      />
    </Section>
  );
}

export default function Discovery() {
  const summary = useQuery({
    queryKey: ['discovery-summary'],
    queryFn: () => api.get('/api/v1/discovery/summary'),
  });
  return (
    <>
      <h1>Discovery</h1>
      {summary.isError ? <ErrorBox error={summary.error} /> : null}
      {summary.data ? (
        <p className="muted">
          {summary.data.total} certificates found, {summary.data.unmanaged} not managed,{' '}
          {summary.data.expired} expired, {summary.data.expiring.days_30} expiring within 30 days;{' '}
          {summary.data.scans.running} scans running.
        </p>
      ) : null}
      <Found />
      <Scans />
    </>
  );
}
