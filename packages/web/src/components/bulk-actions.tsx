import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import { REVOKE_REASONS, type RevokeReason } from '../revoke-reasons';
import { ActionButton, ConfirmDialog, ErrorBox, Field } from './common';

/** Requests are sent in chunks of this many ids, so progress can be shown between them. */
const CHUNK = 20;

interface Outcome {
  done: number;
  changed: number;
  skipped: number;
  failed: number;
  errors: string[];
}

/**
 * Bulk revoke and renew over the inventory's selection: the dialog names how many certificates
 * (and which) will change, then sends them in chunks with a progress bar and the totals.
 */
export function BulkActions({
  selected,
  onDone,
}: {
  selected: readonly { id: string; name: string }[];
  onDone: () => void;
}) {
  const client = useQueryClient();
  const canRevoke = usePermission('cert.revoke');
  const canRenew = usePermission('cert.write');
  const [action, setAction] = useState<'revoke' | 'renew' | null>(null);
  const [reason, setReason] = useState<RevokeReason>('unspecified');
  const [running, setRunning] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<unknown>(null);
  const none = { allowed: false, reason: 'Select certificates first' };
  const run = async () => {
    if (!action) return;
    setRunning(true);
    setError(null);
    const ids = selected.map((c) => c.id);
    let total: Outcome = { done: 0, changed: 0, skipped: 0, failed: 0, errors: [] };
    setOutcome(total);
    try {
      for (let i = 0; i < ids.length; i += CHUNK) {
        const certificate_ids = ids.slice(i, i + CHUNK);
        const part =
          action === 'revoke'
            ? await api.post('/api/v1/certificates/bulk-revoke', { body: { certificate_ids, reason } })
            : await api.post('/api/v1/certificates/bulk-renew', { body: { certificate_ids } });
        if (!part) throw new Error('empty answer from the server');
        total = {
          done: total.done + certificate_ids.length,
          changed: total.changed + ('total_revoked' in part ? part.total_revoked : part.total_renewed),
          skipped: total.skipped + part.total_skipped,
          failed: total.failed + part.total_failed,
          errors: [...total.errors, ...part.errors.map((e) => `${e.certificate_id}: ${e.message}`)],
        };
        setOutcome(total);
      }
    } catch (e) {
      setError(e);
    } finally {
      setRunning(false);
      await client.invalidateQueries({ queryKey: ['certificates'] });
    }
  };
  const close = () => {
    setAction(null);
    setOutcome(null);
    setError(null);
    if (outcome && outcome.done > 0) onDone();
  };
  const count = selected.length;
  const finished = outcome !== null && !running;
  return (
    <fieldset className="filters plain-fieldset">
      <legend className="sr-only">Bulk actions</legend>
      <span>{count} selected</span>
      <ActionButton {...(count === 0 ? none : canRenew)} onClick={() => setAction('renew')}>
        Renew selected
      </ActionButton>
      <ActionButton
        {...(count === 0 ? none : canRevoke)}
        className="button danger"
        onClick={() => setAction('revoke')}
      >
        Revoke selected
      </ActionButton>
      <ConfirmDialog
        open={action !== null}
        title={`${action === 'revoke' ? 'Revoke' : 'Renew'} ${count} certificate${count === 1 ? '' : 's'}?`}
        confirmLabel={finished ? 'Close' : `${action === 'revoke' ? 'Revoke' : 'Renew'} ${count}`}
        danger={action === 'revoke' && !finished}
        busy={running}
        onConfirm={() => (finished ? close() : void run())}
        onCancel={close}
      >
        <p>
          {action === 'revoke'
            ? 'Revocation cannot be undone; already revoked certificates are skipped.'
            : 'A renewal job is queued for each; archived, revoked, expired or renewing ones are skipped.'}
        </p>
        <p className="muted">
          {selected
            .slice(0, 10)
            .map((c) => c.name)
            .join(', ')}
          {count > 10 ? ` and ${count - 10} more` : ''}
        </p>
        {action === 'revoke' && !outcome ? (
          <Field label="Reason" hint="RFC 5280 reason code">
            {({ id, describedBy }) => (
              <select
                id={id}
                value={reason}
                aria-describedby={describedBy}
                onChange={(e) => setReason(e.target.value as RevokeReason)}
              >
                {REVOKE_REASONS.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ) : null}
        {outcome ? (
          <div role="status" aria-live="polite">
            <label>
              Progress{' '}
              <progress max={count} value={outcome.done}>
                {outcome.done} of {count}
              </progress>
            </label>
            <p>
              {outcome.done} of {count} sent: {outcome.changed} {action === 'revoke' ? 'revoked' : 'renewing'}
              , {outcome.skipped} skipped, {outcome.failed} failed.
            </p>
            {outcome.errors.length > 0 ? (
              <ul>
                {outcome.errors.slice(0, 20).map((e) => (
                  <li key={e}>{e}</li>
                ))}
              </ul>
            ) : null}
          </div>
        ) : null}
        {error ? <ErrorBox error={error} /> : null}
      </ConfirmDialog>
    </fieldset>
  );
}
