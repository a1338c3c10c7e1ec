import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { ActionButton, DateTime, ErrorBox, Loading, Notice } from '../components/common';
import { DataTable } from '../components/table';

type Profile = Response200<'/api/v1/admin/scep/profiles'>['profiles'][number];

/** SCEP profiles (RFC 8894): RA certificate, mutual TLS, challenge, device-management trust. */
export default function ScepAdmin() {
  const client = useQueryClient();
  const reload = usePermission('admin.scep.reload');
  const [notice, setNotice] = useState('');
  const stats = useQuery({ queryKey: ['admin-scep'], queryFn: () => api.get('/api/v1/admin/scep/profiles') });
  const reloadTrust = useMutation({
    mutationFn: (p: Profile) =>
      api.post('/api/v1/admin/scep/mdm/reload-trust', { body: { path_id: p.path_id } }),
    onSuccess: async (result, p) => {
      setNotice(
        `Reloaded ${result?.anchors.length ?? 0} device-management signing certificates for ${p.name}.`,
      );
      await client.invalidateQueries({ queryKey: ['admin-scep'] });
    },
  });
  return (
    <>
      <h1>SCEP</h1>
      <p className="muted">
        Each SCEP profile's path, RA certificate, mutual TLS, whether a challenge password is set (the
        password itself is never shown) and, where enabled, device-management challenges.
      </p>
      <Notice message={notice} />
      {reloadTrust.isError ? <ErrorBox error={reloadTrust.error} /> : null}
      {stats.isPending ? <Loading what="Loading SCEP profiles" /> : null}
      {stats.isError ? <ErrorBox error={stats.error} /> : null}
      {stats.data ? (
        <DataTable<Profile>
          caption="SCEP profiles"
          rows={stats.data.profiles}
          rowKey={(p) => p.profile_id}
          empty="No SCEP profile."
          columns={[
            { key: 'name', header: 'Profile', render: (p) => p.name },
            { key: 'path', header: 'Path', render: (p) => (p.path_id ? `/scep/${p.path_id}` : 'default') },
            { key: 'enabled', header: 'Enabled', render: (p) => (p.enabled ? 'yes' : 'no') },
            {
              key: 'ra',
              header: 'RA certificate',
              render: (p) =>
                p.ra_subject ? (
                  <>
                    {p.ra_subject}, until <DateTime value={p.ra_not_after} />
                  </>
                ) : (
                  'not yet created'
                ),
            },
            { key: 'mtls', header: 'Mutual TLS', render: (p) => (p.mtls_enabled ? 'on' : 'off') },
            {
              key: 'challenge',
              header: 'Challenge password',
              render: (p) => (p.challenge_password_set ? 'set' : 'none'),
            },
            {
              key: 'mdm',
              header: 'Device management',
              render: (p) =>
                p.mdm ? (
                  <>
                    {p.mdm.trust_anchors.length} signing certificates, loaded{' '}
                    <DateTime value={p.mdm.trust_anchors_loaded_at} />
                  </>
                ) : (
                  'off'
                ),
            },
            {
              key: 'actions',
              header: 'Actions',
              render: (p) =>
                p.mdm?.trust_bundle_path ? (
                  <ActionButton
                    {...reload}
                    onClick={() => reloadTrust.mutate(p)}
                    disabled={reloadTrust.isPending}
                  >
                    Reload device-management trust of {p.name}
                  </ActionButton>
                ) : (
                  '—'
                ),
            },
          ]}
        />
      ) : null}
    </>
  );
}
