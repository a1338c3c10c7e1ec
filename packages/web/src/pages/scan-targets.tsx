import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
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
} from '../components/common';
import { FormField } from '../components/form-field';
import { DataTable, Pager } from '../components/table';
import { errorFor, fieldErrors } from '../form-errors';
import { iso, listOf } from '../format';

type Target = Response200<'/api/v1/network-scan/targets'>['data'][number];

interface Draft {
  name: string;
  cidrs: string;
  hosts: string;
  ports: string;
  sni_names: string;
  interval_seconds: string;
  enabled: boolean;
}

const emptyDraft: Draft = {
  name: '',
  cidrs: '',
  hosts: '',
  ports: '443',
  sni_names: '',
  interval_seconds: '0',
  enabled: true,
};

function draftOf(t: Target): Draft {
  return {
    name: t.name,
    cidrs: t.cidrs.join(', '),
    hosts: t.hosts.join(', '),
    ports: t.ports.join(', '),
    sni_names: t.sni_names.join(', '),
    interval_seconds: String(t.interval_seconds),
    enabled: t.enabled,
  };
}

/** The body of a create or update; ports and interval checked here so the message is clear. */
function bodyOf(d: Draft) {
  const ports = listOf(d.ports).map((p) => Number(p));
  const bad = listOf(d.ports).find((p) => !/^\d+$/.test(p) || Number(p) < 1 || Number(p) > 65535);
  if (bad !== undefined) throw new Error(`port "${bad}" is not a number from 1 to 65535`);
  if (!/^\d+$/.test(d.interval_seconds.trim()))
    throw new Error('interval must be a whole number of seconds (0 scans only on demand)');
  return {
    name: d.name.trim(),
    cidrs: listOf(d.cidrs),
    hosts: listOf(d.hosts),
    ports,
    sni_names: listOf(d.sni_names),
    interval_seconds: Number(d.interval_seconds.trim()),
    enabled: d.enabled,
  };
}

function TargetForm({ editing, onDone }: { editing: Target | null; onDone: (message: string) => void }) {
  const client = useQueryClient();
  const allowed = usePermission('scan.write');
  const [draft, setDraft] = useState<Draft>(editing ? draftOf(editing) : emptyDraft);
  const save = useMutation({
    mutationFn: async () => {
      const body = bodyOf(draft);
      return editing
        ? api.put('/api/v1/network-scan/targets/{id}', { params: { id: editing.id }, body })
        : api.post('/api/v1/network-scan/targets', { body });
    },
    onSuccess: async () => {
      onDone(`${editing ? 'Saved' : 'Created'} ${draft.name.trim()}.`);
      setDraft(emptyDraft);
      await client.invalidateQueries({ queryKey: ['scan-targets'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  // The API's field errors sit at their inputs too (`ports.0`, `interval_seconds` …).
  const errors = fieldErrors(save.error);
  const text = (key: Exclude<keyof Draft, 'enabled'>, label: string, hint?: string, required?: boolean) => (
    <FormField label={label} hint={hint} error={errorFor(errors, key)}>
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          value={draft[key]}
          required={required}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onChange={(e) => setDraft({ ...draft, [key]: e.target.value })}
        />
      )}
    </FormField>
  );
  return (
    <Section title={editing ? `Edit scan target ${editing.name}` : 'New scan target'}>
      {save.isError ? <ErrorBox error={save.error} /> : null}
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit}>
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          {text('name', 'Name', undefined, true)}
          {text(
            'cidrs',
            'Address ranges',
            'CIDR ranges or single addresses, comma-separated (at most 4096 addresses in all)',
          )}
          {text('hosts', 'Host names', 'DNS names, resolved at scan time and sent as SNI')}
          {text('ports', 'Ports', 'TCP ports, comma-separated', true)}
          {text('sni_names', 'Extra SNI names', 'tried on every address of the ranges')}
          {text(
            'interval_seconds',
            'Interval (seconds)',
            '0 scans only on demand; otherwise at least 300',
            true,
          )}
          <div className="field">
            <label>
              <input
                type="checkbox"
                checked={draft.enabled}
                onChange={(e) => setDraft({ ...draft, enabled: e.target.checked })}
              />{' '}
              Enabled
            </label>
          </div>
          <ActionButton {...allowed} type="submit" className="button primary" disabled={save.isPending}>
            {editing ? 'Save scan target' : 'Create scan target'}
          </ActionButton>
          {editing ? (
            <button type="button" className="button" onClick={() => onDone('')}>
              Cancel edit
            </button>
          ) : null}
        </fieldset>
      </form>
    </Section>
  );
}

export default function ScanTargets() {
  const client = useQueryClient();
  const write = usePermission('scan.write');
  const [page, setPage] = useState(1);
  const [editing, setEditing] = useState<Target | null>(null);
  const [deleting, setDeleting] = useState<Target | null>(null);
  const [notice, setNotice] = useState('');
  const list = useQuery({
    queryKey: ['scan-targets', page],
    queryFn: () => api.get('/api/v1/network-scan/targets', { query: { page, per_page: 50 } }),
  });
  const scan = useMutation({
    mutationFn: (t: Target) => api.post('/api/v1/network-scan/targets/{id}/scan', { params: { id: t.id } }),
    onSuccess: async (started, t) => {
      setNotice(`Scan of ${t.name} started (${started?.id ?? 'scan'}); see Discovery for its progress.`);
      await client.invalidateQueries({ queryKey: ['discovery-scans'] });
    },
  });
  const remove = useMutation({
    mutationFn: (t: Target) => api.delete('/api/v1/network-scan/targets/{id}', { params: { id: t.id } }),
    onSuccess: async (_, t) => {
      setDeleting(null);
      setNotice(`Deleted ${t.name}; its scans and findings stay.`);
      await client.invalidateQueries({ queryKey: ['scan-targets'] });
    },
  });
  return (
    <>
      <h1>Scan targets</h1>
      <p className="muted">
        Network ranges and ports the server scanner walks for TLS certificates. Creating, changing or running
        a target authorizes connections into internal networks.
      </p>
      <Notice message={notice} />
      {scan.isError ? <ErrorBox error={scan.error} /> : null}
      {list.isPending ? <Loading what="Loading scan targets" /> : null}
      {list.isError ? <ErrorBox error={list.error} /> : null}
      {list.data ? (
        <DataTable<Target>
          caption="Scan targets"
          rows={list.data.data}
          rowKey={(t) => t.id}
          empty="No scan targets yet."
          columns={[
            { key: 'name', header: 'Name', render: (t) => t.name },
            {
              key: 'where',
              header: 'Ranges and hosts',
              render: (t) => [...t.cidrs, ...t.hosts].join(', ') || '—',
            },
            { key: 'ports', header: 'Ports', render: (t) => t.ports.join(', ') },
            {
              key: 'interval',
              header: 'Schedule',
              render: (t) => (t.interval_seconds === 0 ? 'on demand' : `every ${t.interval_seconds} s`),
            },
            { key: 'enabled', header: 'Enabled', render: (t) => (t.enabled ? 'yes' : 'no') },
            { key: 'last', header: 'Last scan', render: (t) => <DateTime value={iso(t.last_scan_at)} /> },
            {
              key: 'actions',
              header: 'Actions',
              render: (t) => (
                <span className="row-actions">
                  <ActionButton {...write} onClick={() => scan.mutate(t)} disabled={scan.isPending}>
                    Scan {t.name} now
                  </ActionButton>{' '}
                  <ActionButton {...write} onClick={() => setEditing(t)}>
                    Edit {t.name}
                  </ActionButton>{' '}
                  <ActionButton {...write} className="button danger" onClick={() => setDeleting(t)}>
                    Delete {t.name}
                  </ActionButton>
                </span>
              ),
            },
          ]}
        />
      ) : null}
      {list.data && (list.data.total ?? 0) > 50 ? (
        <Pager page={page} perPage={50} total={list.data.total ?? 0} onPage={setPage} />
      ) : null}
      <TargetForm
        key={editing?.id ?? 'new'}
        editing={editing}
        onDone={(message) => {
          setEditing(null);
          if (message) setNotice(message);
        }}
      />
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete scan target ${deleting?.name ?? ''}?`}
        confirmLabel={`Delete ${deleting?.name ?? ''}`}
        danger
        busy={remove.isPending}
        onConfirm={() => deleting && remove.mutate(deleting)}
        onCancel={() => setDeleting(null)}
      >
        <p>The target stops being scanned. Its past scans and the certificates they found stay.</p>
        {remove.isError ? <ErrorBox error={remove.error} /> : null}
      </ConfirmDialog>
    </>
  );
}
