import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { ActionButton, DateTime, ErrorBox } from '../components/common';
import { ResourceList } from '../components/resource-list';

type Session = Response200<'/api/v1/auth/sessions'>['data'][number];

/** Your sessions (every user's with auth.session.list.all), each revocable. */
export default function Sessions() {
  const client = useQueryClient();
  const revokePerm = usePermission('auth.session.revoke');
  const all = usePermission('auth.session.list.all').allowed;
  const revoke = useMutation({
    mutationFn: (id: string) => api.delete('/api/v1/auth/sessions/{id}', { params: { id } }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['sessions'] }),
  });
  return (
    <>
      {revoke.isError ? <ErrorBox error={revoke.error} /> : null}
      <ResourceList<Session>
        title="Sessions"
        intro={all ? "Every user's sessions in your tenant." : 'Your sessions.'}
        queryKey={['sessions', all]}
        load={(page, per_page) =>
          api.get('/api/v1/auth/sessions', {
            query: { page, per_page, ...(all ? { all: 'true' as const } : {}) },
          })
        }
        rowKey={(s) => s.id}
        empty="No sessions (API-key callers have none)."
        columns={[
          { key: 'user', header: 'User', render: (s) => `${s.user_id}${s.current ? ' (this session)' : ''}` },
          { key: 'method', header: 'Method', render: (s) => s.auth_method },
          { key: 'ip', header: 'Address', render: (s) => s.ip_address ?? '—' },
          { key: 'seen', header: 'Last seen', render: (s) => <DateTime value={s.last_seen_at} /> },
          { key: 'ends', header: 'Ends', render: (s) => <DateTime value={s.expires_at} /> },
          {
            key: 'actions',
            header: 'Actions',
            render: (s) =>
              s.current ? null : (
                <ActionButton
                  {...revokePerm}
                  className="button danger"
                  onClick={() => revoke.mutate(s.id)}
                  aria-label={`Revoke session ${s.id}`}
                >
                  Revoke
                </ActionButton>
              ),
          },
        ]}
      />
    </>
  );
}
