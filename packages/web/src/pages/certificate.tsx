import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import {
  ActionButton,
  ConfirmDialog,
  DateTime,
  ErrorBox,
  Loading,
  Notice,
  Section,
  StatusBadge,
} from '../components/common';
import { DataTable } from '../components/table';
import { VersionDetails } from '../components/version-details';
import { download } from '../download';
import { Expiry } from '../expiry';
import { Actor, actorRef, Named, type Ref, useNames } from '../names';
import { REVOKE_REASONS, type RevokeReason } from '../revoke-reasons';

type Pending = 'issue' | 'renew' | 'revoke' | null;

/** One certificate: versions and chain, violations, jobs and deployments, audit trail, actions. */
export default function Certificate() {
  const { id } = useParams({ from: '/app/certificates/$id' });
  const client = useQueryClient();
  const write = usePermission('cert.write');
  const revokePerm = usePermission('cert.revoke');
  const exportPerm = usePermission('cert.read');
  const auditRead = usePermission('audit.read');
  const [pending, setPending] = useState<Pending>(null);
  const [reason, setReason] = useState<RevokeReason>('unspecified');
  const [done, setDone] = useState<string | null>(null);
  const [chosenVersion, setChosenVersion] = useState<string | null>(null);

  const cert = useQuery({
    queryKey: ['certificate', id],
    queryFn: () => api.get('/api/v1/certificates/{id}', { params: { id } }),
  });
  const versions = useQuery({
    queryKey: ['certificate', id, 'versions'],
    queryFn: () => api.get('/api/v1/certificates/{id}/versions', { params: { id }, query: { per_page: 50 } }),
  });
  const violations = useQuery({
    queryKey: ['certificate', id, 'violations'],
    queryFn: () => api.get('/api/v1/violations', { query: { certificate_id: id, per_page: 50 } }),
  });
  const jobs = useQuery({
    queryKey: ['certificate', id, 'jobs'],
    queryFn: () => api.get('/api/v1/jobs', { query: { certificate_id: id, per_page: 50 } }),
  });
  const audit = useQuery({
    queryKey: ['certificate', id, 'audit'],
    enabled: auditRead.allowed,
    queryFn: () => api.get('/api/v1/audit', { query: { resource_id: id, per_page: 50 } }),
  });

  // One names request for everything the page names: the certificate's references, the jobs'
  // targets and agents, the audit trail's actors.
  const settled =
    cert.data && !versions.isPending && !jobs.isPending && (!auditRead.allowed || !audit.isPending);
  const names = useNames(settled ? [cert.data] : undefined, (c) => {
    const refs: Ref[] = [
      ['issuer', c.issuer_id],
      ['owner', c.owner_id],
      ['team', c.team_id],
      ['profile', c.profile_id],
      ['renewal_policy', c.renewal_policy_id],
    ];
    for (const v of versions.data?.data ?? []) refs.push(['issuer', v.issuer_id]);
    for (const j of jobs.data?.data ?? []) refs.push(['target', j.target_id], ['agent', j.agent_id]);
    for (const e of audit.data?.data ?? []) {
      const actor = actorRef(e.actor_type, e.actor);
      if (actor) refs.push(actor);
    }
    return refs;
  });

  const act = useMutation({
    mutationFn: async (action: Exclude<Pending, null>) => {
      if (action === 'revoke')
        return api.post('/api/v1/certificates/{id}/revoke', { params: { id }, body: { reason } });
      if (action === 'renew')
        return api.post('/api/v1/certificates/{id}/renew', { params: { id }, body: {} });
      return api.post('/api/v1/certificates/{id}/issue', { params: { id }, body: {} });
    },
    onSuccess: async (_, action) => {
      setPending(null);
      setDone(
        action === 'revoke'
          ? 'Certificate revoked.'
          : action === 'renew'
            ? 'Renewal started.'
            : 'Certificate issued.',
      );
      await client.invalidateQueries({ queryKey: ['certificate', id] });
      await client.invalidateQueries({ queryKey: ['certificates'] });
      await client.invalidateQueries({ queryKey: ['dashboard'] });
    },
  });

  if (cert.isPending) return <Loading what="Loading the certificate" />;
  if (cert.isError) return <ErrorBox error={cert.error} />;
  const c = cert.data;
  const current = versions.data?.data.find((v) => v.id === c.current_version_id) ?? versions.data?.data[0];
  const shownVersion = versions.data?.data.find((v) => v.id === chosenVersion) ?? current;
  const revoked = c.status === 'Revoked';
  const issued = Boolean(c.current_version_id);

  return (
    <>
      <p>
        <Link to="/certificates">← Certificates</Link>
      </p>
      <h1>
        {c.name} <StatusBadge status={c.status} />
      </h1>
      <Notice message={done} />
      {act.isError ? <ErrorBox error={act.error} /> : null}
      <div className="actions">
        {!issued ? (
          <ActionButton {...write} className="button primary" onClick={() => setPending('issue')}>
            Issue
          </ActionButton>
        ) : (
          <ActionButton {...write} onClick={() => setPending('renew')} disabled={revoked}>
            Renew
          </ActionButton>
        )}
        <ActionButton
          {...revokePerm}
          className="button danger"
          onClick={() => setPending('revoke')}
          disabled={!issued || revoked}
        >
          Revoke
        </ActionButton>
        <ActionButton
          {...exportPerm}
          disabled={!issued}
          onClick={() =>
            void download(`/api/v1/certificates/${encodeURIComponent(id)}/export?format=pem`, `${c.name}.pem`)
          }
        >
          Export PEM
        </ActionButton>
      </div>

      <ConfirmDialog
        open={pending === 'revoke'}
        title={`Revoke ${c.name}?`}
        confirmLabel={`Revoke ${c.name}`}
        danger
        busy={act.isPending}
        onCancel={() => setPending(null)}
        onConfirm={() => act.mutate('revoke')}
      >
        <p>
          The current version{current ? ` (serial ${current.serial_number})` : ''} of{' '}
          <strong>{c.common_name}</strong> will be revoked and published in the CRL and OCSP. This cannot be
          undone.
        </p>
        <label className="form">
          Reason
          <select value={reason} onChange={(e) => setReason(e.target.value as RevokeReason)}>
            {REVOKE_REASONS.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
      </ConfirmDialog>
      <ConfirmDialog
        open={pending === 'renew'}
        title={`Renew ${c.name}?`}
        confirmLabel={`Renew ${c.name}`}
        busy={act.isPending}
        onCancel={() => setPending(null)}
        onConfirm={() => act.mutate('renew')}
      >
        <p>
          A new version of <strong>{c.common_name}</strong> will be issued by its issuer; the current one
          stays valid until it expires.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={pending === 'issue'}
        title={`Issue ${c.name}?`}
        confirmLabel={`Issue ${c.name}`}
        busy={act.isPending}
        onCancel={() => setPending(null)}
        onConfirm={() => act.mutate('issue')}
      >
        <p>
          A first version of <strong>{c.common_name}</strong> ({c.sans.join(', ') || 'no SANs'}) will be
          issued with a key generated on the server.
        </p>
      </ConfirmDialog>

      <div className="grid">
        <Section title="Details">
          <dl className="kv">
            <dt>Common name</dt>
            <dd>{c.common_name}</dd>
            <dt>SANs</dt>
            <dd>{c.sans.join(', ') || '—'}</dd>
            <dt>Expires</dt>
            <dd>
              <Expiry value={c.expires_at} />
            </dd>
            <dt>Issuer</dt>
            <dd>
              <Named names={names} kind="issuer" id={c.issuer_id} />
            </dd>
            <dt>Owner</dt>
            <dd>
              <Named names={names} kind="owner" id={c.owner_id} />
            </dd>
            <dt>Team</dt>
            <dd>
              <Named names={names} kind="team" id={c.team_id} />
            </dd>
            <dt>Profile</dt>
            <dd>
              <Named names={names} kind="profile" id={c.profile_id} />
            </dd>
            <dt>Renewal policy</dt>
            <dd>
              <Named names={names} kind="renewal_policy" id={c.renewal_policy_id} />
            </dd>
            <dt>Environment</dt>
            <dd>{c.environment ?? '—'}</dd>
            <dt>Source</dt>
            <dd>{c.source || '—'}</dd>
            <dt>Created</dt>
            <dd>
              <DateTime value={c.created_at} />
            </dd>
            <dt>Last renewal</dt>
            <dd>
              <DateTime value={c.last_renewal_at} />
            </dd>
          </dl>
        </Section>
        <Section title="Policy violations">
          {violations.isPending ? <Loading /> : null}
          {violations.isError ? <ErrorBox error={violations.error} /> : null}
          {violations.data ? (
            violations.data.data.length === 0 ? (
              <p className="muted">No violations.</p>
            ) : (
              <ul className="plain">
                {violations.data.data.map((v) => (
                  <li key={v.id}>
                    <StatusBadge status={v.severity} /> {v.message}{' '}
                    <span className="muted">({v.rule_type})</span>
                  </li>
                ))}
              </ul>
            )
          ) : null}
        </Section>
      </div>
      <Section title="Versions">
        {versions.isPending ? <Loading /> : null}
        {versions.isError ? <ErrorBox error={versions.error} /> : null}
        {versions.data ? (
          <DataTable
            caption="Versions"
            rows={versions.data.data}
            rowKey={(v) => v.id}
            empty="Not issued yet: Issue creates the first version."
            columns={[
              { key: 'serial', header: 'Serial', render: (v) => <code>{v.serial_number}</code> },
              { key: 'from', header: 'Valid from', render: (v) => <DateTime value={v.not_before} /> },
              { key: 'to', header: 'Valid until', render: (v) => <DateTime value={v.not_after} /> },
              {
                key: 'key',
                header: 'Key',
                render: (v) => `${v.key_algorithm}${v.key_size ? ` ${v.key_size}` : ''}`,
              },
              {
                key: 'revoked',
                header: 'Revoked',
                render: (v) =>
                  v.revoked_at ? (
                    <>
                      <DateTime value={v.revoked_at} /> ({v.revocation_reason})
                    </>
                  ) : (
                    '—'
                  ),
              },
              {
                key: 'view',
                header: 'Decoded',
                render: (v) => (
                  <button
                    type="button"
                    className="button small"
                    aria-pressed={v.id === shownVersion?.id}
                    aria-label={`Show version ${v.serial_number} decoded`}
                    onClick={() => setChosenVersion(v.id)}
                  >
                    Show
                  </button>
                ),
              },
            ]}
          />
        ) : null}
      </Section>
      {shownVersion ? (
        <Section title={`Version ${shownVersion.serial_number} decoded`}>
          <VersionDetails certificateId={id} name={c.name} version={shownVersion} />
        </Section>
      ) : null}
      <Section title="Jobs and deployments">
        {jobs.isPending ? <Loading /> : null}
        {jobs.isError ? <ErrorBox error={jobs.error} /> : null}
        {jobs.data ? (
          <DataTable
            caption="Jobs"
            rows={jobs.data.data}
            rowKey={(j) => j.id}
            empty="No jobs."
            columns={[
              { key: 'type', header: 'Type', render: (j) => j.type },
              { key: 'status', header: 'Status', render: (j) => <StatusBadge status={j.status} /> },
              {
                key: 'target',
                header: 'Target',
                render: (j) => <Named names={names} kind="target" id={j.target_id} />,
              },
              {
                key: 'agent',
                header: 'Agent',
                render: (j) => <Named names={names} kind="agent" id={j.agent_id} />,
              },
              { key: 'created', header: 'Created', render: (j) => <DateTime value={String(j.created_at)} /> },
              { key: 'error', header: 'Last error', render: (j) => j.last_error ?? '—' },
            ]}
          />
        ) : null}
      </Section>
      {auditRead.allowed ? (
        <Section title="Audit trail">
          {audit.isPending ? <Loading /> : null}
          {audit.isError ? <ErrorBox error={audit.error} /> : null}
          {audit.data ? (
            <DataTable
              caption="Audit trail"
              rows={audit.data.data}
              rowKey={(e) => e.id}
              columns={[
                { key: 'when', header: 'When', render: (e) => <DateTime value={String(e.occurred_at)} /> },
                { key: 'action', header: 'Action', render: (e) => e.action },
                {
                  key: 'actor',
                  header: 'Actor',
                  render: (e) => <Actor names={names} type={e.actor_type} id={e.actor} />,
                },
              ]}
            />
          ) : null}
        </Section>
      ) : null}
    </>
  );
}
