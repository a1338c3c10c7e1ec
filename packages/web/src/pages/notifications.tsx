import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { ActionButton, DateTime, ErrorBox, StatusBadge } from '../components/common';
import { FilterSelect } from '../components/filter-select';
import { ResourceList } from '../components/resource-list';
import { iso } from '../format';
import { NOTIFICATION_STATUSES, type NotificationSearch } from '../list-search';
import { Named, type Names } from '../names';

type Notification = Response200<'/api/v1/notifications'>['data'][number];
const STATUS_LABELS: Record<(typeof NOTIFICATION_STATUSES)[number], string> = {
  dead: 'Dead',
  failed: 'Failed',
  pending: 'Pending',
  sent: 'Sent',
  read: 'Read',
  undeliverable: 'Undeliverable',
};

/** `webhook:<id>` names a webhook; other channels (`email` …) are shown as they are. */
const webhookOf = (channel: string): string | null =>
  channel.startsWith('webhook:') ? channel.slice('webhook:'.length) : null;

function Channel({ channel, names }: { channel: string; names: Names | undefined }) {
  const webhook = webhookOf(channel);
  if (!webhook) return <>{channel}</>;
  return (
    <>
      webhook <Named names={names} kind="webhook" id={webhook} />
    </>
  );
}

/** Notifications, with a status filter and requeue for the dead, failed and undeliverable ones. */
export default function Notifications() {
  const client = useQueryClient();
  const write = usePermission('notification.write');
  const { status } = useSearch({ from: '/app/notifications' }) as NotificationSearch;
  const navigate = useNavigate({ from: '/notifications' });
  const requeue = useMutation({
    mutationFn: (id: string) => api.post('/api/v1/notifications/{id}/requeue', { params: { id } }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['notifications'] }),
  });
  return (
    <>
      {requeue.isError ? <ErrorBox error={requeue.error} /> : null}
      <ResourceList<Notification>
        key={status ?? ''}
        title="Notifications"
        empty="No notifications yet. Expiry warnings, failed renewals and other events are listed here once they are sent to a webhook or an inbox."
        queryKey={['notifications', status ?? '']}
        load={(page, per_page) =>
          api.get('/api/v1/notifications', {
            query: { page, per_page, ...(status ? { status: [status] } : {}) },
          })
        }
        toolbar={
          <FilterSelect
            label="Status"
            value={status}
            options={NOTIFICATION_STATUSES}
            labels={STATUS_LABELS}
            onChange={(next) => void navigate({ search: next ? { status: next } : {} })}
          />
        }
        rowKey={(n) => n.id}
        refs={(n) => [
          ['certificate', n.certificate_id],
          ['webhook', webhookOf(n.channel)],
        ]}
        columns={(names) => [
          { key: 'type', header: 'Type', render: (n) => n.type },
          { key: 'status', header: 'Status', render: (n) => <StatusBadge status={n.status} /> },
          { key: 'channel', header: 'Channel', render: (n) => <Channel channel={n.channel} names={names} /> },
          {
            key: 'cert',
            header: 'Certificate',
            render: (n) => <Named names={names} kind="certificate" id={n.certificate_id} />,
          },
          { key: 'subject', header: 'Subject', render: (n) => n.subject },
          { key: 'retries', header: 'Retries', render: (n) => n.retry_count },
          { key: 'error', header: 'Last error', render: (n) => n.last_error ?? '—' },
          { key: 'created', header: 'Created', render: (n) => <DateTime value={iso(n.created_at)} /> },
          {
            key: 'actions',
            header: 'Actions',
            render: (n) =>
              n.status === 'dead' || n.status === 'failed' || n.status === 'undeliverable' ? (
                <ActionButton
                  {...write}
                  onClick={() => requeue.mutate(n.id)}
                  aria-label={`Requeue ${n.subject}`}
                >
                  Requeue
                </ActionButton>
              ) : null,
          },
        ]}
      />
    </>
  );
}
