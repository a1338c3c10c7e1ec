import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError, api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { AgentRegistration } from '../components/agent-registration';
import { ActionButton, ConfirmDialog, DateTime, ErrorBox, Field, StatusBadge } from '../components/common';
import { ResourceList } from '../components/resource-list';
import { iso } from '../format';

type Agent = Response200<'/api/v1/agents'>['data'][number];

/** The counts a 409 from retire carries: what still depends on the agent. */
function dependents(error: unknown): string | null {
  if (!(error instanceof ApiError) || error.status !== 409) return null;
  const p = error.problem as unknown as Record<string, unknown>;
  const n = (key: string) => (typeof p[key] === 'number' ? (p[key] as number) : 0);
  return `${n('active_targets')} active targets, ${n('active_certificates')} active certificates and ${n('pending_jobs')} pending jobs still depend on it; retire with force (and a reason) to go ahead.`;
}

function RetireDialog({ agent, onClose }: { agent: Agent | null; onClose: () => void }) {
  const client = useQueryClient();
  const [force, setForce] = useState(false);
  const [reason, setReason] = useState('');
  const needsReason = force && reason.trim() === '';
  const retire = useMutation({
    mutationFn: () => {
      if (!agent) throw new Error('no agent chosen');
      if (needsReason) throw new Error('a forced retirement needs a reason');
      return api.delete('/api/v1/agents/{id}', {
        params: { id: agent.id },
        query: { ...(force ? { force: true } : {}), ...(reason.trim() ? { reason: reason.trim() } : {}) },
      });
    },
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['agents'] });
      onClose();
    },
  });
  const blocked = dependents(retire.error);
  return (
    <ConfirmDialog
      open={agent !== null}
      title={`Retire agent ${agent?.name ?? ''}?`}
      confirmLabel={force ? `Force retire ${agent?.name ?? ''}` : `Retire ${agent?.name ?? ''}`}
      danger
      busy={retire.isPending || needsReason}
      onConfirm={() => retire.mutate()}
      onCancel={onClose}
    >
      <p>
        Its key stops working and it gets no more jobs. Without force the server refuses while targets,
        certificates or jobs still depend on it.
      </p>
      {blocked ? (
        <p className="error" role="alert">
          {blocked}
        </p>
      ) : retire.isError ? (
        <ErrorBox error={retire.error} />
      ) : null}
      <div className="form">
        <div className="field">
          <label>
            <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} /> Force, even
            with dependents
          </label>
        </div>
        <Field
          label="Reason"
          hint={force ? 'required when forcing; kept in the audit trail' : 'kept in the audit trail'}
        >
          {({ id, describedBy }) => (
            <textarea
              id={id}
              value={reason}
              maxLength={2000}
              required={force}
              aria-invalid={needsReason}
              aria-describedby={describedBy}
              onChange={(e) => setReason(e.target.value)}
            />
          )}
        </Field>
        {needsReason ? <p className="muted">A forced retirement needs a reason.</p> : null}
      </div>
    </ConfirmDialog>
  );
}

export default function Agents() {
  const retire = usePermission('agent.retire');
  const [retiring, setRetiring] = useState<Agent | null>(null);
  return (
    <>
      <ResourceList<Agent>
        title="Agents"
        empty="No agents yet. Agents deploy certificates to servers and report what they find; register one below and run it with the key it is given."
        queryKey={['agents']}
        load={(page, per_page) => api.get('/api/v1/agents', { query: { page, per_page } })}
        rowKey={(a) => a.id}
        columns={[
          { key: 'name', header: 'Name', render: (a) => a.name },
          { key: 'status', header: 'Status', render: (a) => <StatusBadge status={a.status} /> },
          {
            key: 'host',
            header: 'Host',
            render: (a) => `${a.hostname}${a.ip_address ? ` (${a.ip_address})` : ''}`,
          },
          { key: 'version', header: 'Version', render: (a) => a.version ?? '—' },
          {
            key: 'seen',
            header: 'Last heartbeat',
            render: (a) => <DateTime value={iso(a.last_heartbeat_at)} />,
          },
          {
            key: 'retired',
            header: 'Retired',
            // The server's own discovery sources (built_in) are never retired: no Retire action.
            render: (a) =>
              a.retired_at ? (
                <DateTime value={iso(a.retired_at)} />
              ) : a.built_in ? (
                <span className="muted">Built in (cannot be retired)</span>
              ) : (
                // Secondary, not red: the confirmation dialog is where the destructive step is.
                <ActionButton {...retire} className="button" onClick={() => setRetiring(a)}>
                  Retire<span className="sr-only"> {a.name}</span>
                </ActionButton>
              ),
          },
        ]}
      />
      <RetireDialog key={retiring?.id ?? 'none'} agent={retiring} onClose={() => setRetiring(null)} />
      <AgentRegistration />
    </>
  );
}
