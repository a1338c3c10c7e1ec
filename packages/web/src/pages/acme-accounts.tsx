import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { ActionButton, ConfirmDialog, DateTime, ErrorBox, Notice, StatusBadge } from '../components/common';
import { Picker } from '../components/picker';
import { ResourceList } from '../components/resource-list';

type Account = Response200<'/api/v1/acme/accounts'>['data'][number];
type Status = Account['status'];

/** What names an account to a person: its first contact, else its id (the end of its kid URL). */
export const accountName = (a: Pick<Account, 'id' | 'contact'>) =>
  a.contact[0] ? `${a.contact[0].replace(/^mailto:/i, '')} (${a.id})` : a.id;

/**
 * The ACME server's accounts with a status and profile filter; an administrator deactivates one
 * (RFC 8555 §7.3.6) after a confirmation naming it.
 */
export default function AcmeAccounts() {
  const client = useQueryClient();
  const write = usePermission('acme.account.write');
  const [status, setStatus] = useState<Status | ''>('');
  const [profile, setProfile] = useState('');
  const [ending, setEnding] = useState<Account | null>(null);
  const [notice, setNotice] = useState('');
  const deactivate = useMutation({
    mutationFn: (a: Account) => api.post('/api/v1/acme/accounts/{id}/deactivate', { params: { id: a.id } }),
    onSuccess: async (_, a) => {
      setEnding(null);
      setNotice(`Deactivated ${accountName(a)}.`);
      await client.invalidateQueries({ queryKey: ['acme-accounts'] });
    },
  });
  return (
    <>
      <Notice message={notice} />
      <ResourceList<Account>
        title="ACME accounts"
        intro="Accounts ACME clients opened. Deactivating one is final: its key signs nothing more and its pending orders end."
        queryKey={['acme-accounts', status, profile]}
        load={(page, per_page) =>
          api.get('/api/v1/acme/accounts', {
            query: {
              page,
              per_page,
              ...(status ? { status } : {}),
              ...(profile ? { profile_id: profile } : {}),
            },
          })
        }
        toolbar={
          <>
            <label>
              Status
              <select value={status} onChange={(e) => setStatus(e.target.value as Status | '')}>
                <option value="">Any</option>
                <option value="valid">Valid</option>
                <option value="deactivated">Deactivated</option>
                <option value="revoked">Revoked</option>
              </select>
            </label>
            <Picker
              resource="profiles"
              label="Profile"
              value={profile}
              onChange={setProfile}
              emptyLabel="Any"
            />
          </>
        }
        rowKey={(a) => a.id}
        empty="No ACME accounts."
        columns={[
          { key: 'contact', header: 'Contact', render: (a) => a.contact.join(', ') || '—' },
          { key: 'status', header: 'Status', render: (a) => <StatusBadge status={a.status} /> },
          { key: 'profile', header: 'Profile', render: (a) => a.profile_id },
          { key: 'key', header: 'Key thumbprint', render: (a) => <code>{a.key_thumbprint}</code> },
          { key: 'eab', header: 'EAB key', render: (a) => a.eab_key_id ?? '—' },
          { key: 'created', header: 'Created', render: (a) => <DateTime value={a.created_at} /> },
          {
            key: 'actions',
            header: 'Actions',
            render: (a) =>
              a.status === 'valid' ? (
                <ActionButton
                  {...write}
                  className="button danger"
                  onClick={() => {
                    deactivate.reset();
                    setEnding(a);
                  }}
                  aria-label={`Deactivate ${accountName(a)}`}
                >
                  Deactivate
                </ActionButton>
              ) : null,
          },
        ]}
      />
      <ConfirmDialog
        open={ending !== null}
        title={`Deactivate ACME account ${ending ? accountName(ending) : ''}?`}
        confirmLabel={`Deactivate ${ending ? accountName(ending) : ''}`}
        danger
        busy={deactivate.isPending}
        onCancel={() => setEnding(null)}
        onConfirm={() => ending && deactivate.mutate(ending)}
      >
        <p>
          This cannot be undone. The key with thumbprint <code>{ending?.key_thumbprint}</code> can sign
          nothing more on this server and cannot open a new account; the account's pending orders become
          invalid. Certificates it was issued stay valid.
        </p>
        {deactivate.isError ? <ErrorBox error={deactivate.error} /> : null}
      </ConfirmDialog>
    </>
  );
}
