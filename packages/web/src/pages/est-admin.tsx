import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { ActionButton, DateTime, ErrorBox, Loading, Notice } from '../components/common';
import { DataTable } from '../components/table';

type Profile = Response200<'/api/v1/admin/est/profiles'>['profiles'][number];

/** EST profiles with their counters, and re-reading a profile's mutual-TLS trust bundle. */
export default function EstAdmin() {
  const client = useQueryClient();
  const reload = usePermission('admin.est.reload');
  const [notice, setNotice] = useState('');
  const stats = useQuery({ queryKey: ['admin-est'], queryFn: () => api.get('/api/v1/admin/est/profiles') });
  const reloadTrust = useMutation({
    mutationFn: (p: Profile | null) =>
      api.post('/api/v1/admin/est/reload-trust', { body: p === null ? {} : { path_id: p.path_id } }),
    onSuccess: async (result) => {
      const rows = result?.reloaded ?? [];
      setNotice(
        rows.length === 0
          ? 'No EST profile names a trust bundle; nothing reloaded.'
          : `Reloaded ${rows.map((r) => `${r.anchors} anchors for ${r.profile_id}`).join(', ')}.`,
      );
      await client.invalidateQueries({ queryKey: ['admin-est'] });
    },
  });
  return (
    <>
      <h1>EST</h1>
      <p className="muted">
        Enrollment over Secure Transport (RFC 7030): each profile's path, mutual-TLS trust and event counters
        from the audit trail.
      </p>
      <p>
        <ActionButton {...reload} onClick={() => reloadTrust.mutate(null)} disabled={reloadTrust.isPending}>
          Reload every trust bundle
        </ActionButton>
      </p>
      <Notice message={notice} />
      {reloadTrust.isError ? <ErrorBox error={reloadTrust.error} /> : null}
      {stats.isPending ? <Loading what="Loading EST profiles" /> : null}
      {stats.isError ? <ErrorBox error={stats.error} /> : null}
      {stats.data ? (
        <DataTable<Profile>
          caption="EST profiles"
          rows={stats.data.profiles}
          rowKey={(p) => p.profile_id}
          empty="No EST profile."
          columns={[
            { key: 'name', header: 'Profile', render: (p) => p.name },
            {
              key: 'path',
              header: 'Path',
              render: (p) => (p.path_id ? `/.well-known/est/${p.path_id}` : 'default'),
            },
            { key: 'enabled', header: 'Enabled', render: (p) => (p.enabled ? 'yes' : 'no') },
            {
              key: 'keygen',
              header: 'Server key generation',
              render: (p) => (p.server_keygen ? 'yes' : 'no'),
            },
            {
              key: 'trust',
              header: 'Trust anchors loaded',
              render: (p) =>
                p.mtls_trust_bundle_path === null ? (
                  'no bundle'
                ) : (
                  <DateTime value={p.trust_anchors_loaded_at} />
                ),
            },
            {
              key: 'counters',
              header: 'Counters',
              render: (p) =>
                Object.entries(p.counters)
                  .filter(([, n]) => n > 0)
                  .map(([name, n]) => `${name} ${n}`)
                  .join(', ') || 'no events',
            },
            {
              key: 'actions',
              header: 'Actions',
              render: (p) =>
                p.mtls_trust_bundle_path === null ? (
                  '—'
                ) : (
                  <ActionButton
                    {...reload}
                    onClick={() => reloadTrust.mutate(p)}
                    disabled={reloadTrust.isPending}
                  >
                    Reload trust of {p.name}
                  </ActionButton>
                ),
            },
          ]}
        />
      ) : null}
    </>
  );
}
