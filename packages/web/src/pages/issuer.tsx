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
} from '../components/common';
import { DecodedChain } from '../components/decoded-certificate';
import { download } from '../download';

/** One issuer: its settings that may be shown, enable/disable, its CA chain and its download. */
export default function Issuer() {
  const { id } = useParams({ from: '/app/issuers/$id' });
  const client = useQueryClient();
  const write = usePermission('issuer.write');
  const [confirming, setConfirming] = useState(false);
  const [notice, setNotice] = useState('');
  const [downloadError, setDownloadError] = useState<unknown>(null);
  const issuer = useQuery({
    queryKey: ['issuer', id],
    queryFn: () => api.get('/api/v1/issuers/{id}', { params: { id } }),
  });
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => api.put('/api/v1/issuers/{id}', { params: { id }, body: { enabled } }),
    onSuccess: async (updated) => {
      setConfirming(false);
      setNotice(updated.enabled ? `${updated.name} is enabled.` : `${updated.name} is disabled.`);
      await client.invalidateQueries({ queryKey: ['issuer', id] });
      await client.invalidateQueries({ queryKey: ['issuers'] });
    },
  });
  const chain = useQuery({
    queryKey: ['issuer', id, 'chain'],
    enabled: issuer.isSuccess,
    queryFn: () => api.get('/api/v1/issuers/{id}/chain/details', { params: { id } }),
  });
  if (issuer.isPending) return <Loading what="Loading the issuer" />;
  if (issuer.isError) return <ErrorBox error={issuer.error} />;
  const i = issuer.data;
  const downloadChain = async () => {
    setDownloadError(null);
    try {
      await download(`/api/v1/issuers/${encodeURIComponent(id)}/chain`, `${i.name}-chain.pem`);
    } catch (error) {
      setDownloadError(error);
    }
  };
  return (
    <>
      <p>
        <Link to="/issuers">← Issuers</Link>
      </p>
      <h1>
        {i.name}{' '}
        <span className={`badge ${i.enabled ? 'badge-active' : 'badge-archived'}`}>
          {i.enabled ? 'enabled' : 'disabled'}
        </span>
      </h1>
      <Notice message={notice} />
      {toggle.isError ? <ErrorBox error={toggle.error} /> : null}
      <div className="actions">
        <ActionButton {...write} onClick={() => setConfirming(true)}>
          {i.enabled ? 'Disable' : 'Enable'}
        </ActionButton>
        <ActionButton allowed reason="" onClick={() => void downloadChain()}>
          Download CA chain (PEM)
        </ActionButton>
        <Link to="/certificates" search={{ issuer_id: i.id }} className="button">
          Certificates of this issuer
        </Link>
      </div>
      {downloadError ? <ErrorBox error={downloadError} /> : null}
      <ConfirmDialog
        open={confirming}
        title={`${i.enabled ? 'Disable' : 'Enable'} ${i.name}?`}
        confirmLabel={`${i.enabled ? 'Disable' : 'Enable'} ${i.name}`}
        danger={i.enabled}
        busy={toggle.isPending}
        onCancel={() => setConfirming(false)}
        onConfirm={() => toggle.mutate(!i.enabled)}
      >
        <p>
          {i.enabled
            ? 'Issuing, renewing and enrolling through this issuer is refused until it is enabled again. Certificates it issued stay valid, and its CRL and OCSP keep answering.'
            : 'Certificates can be issued and renewed through this issuer again.'}
        </p>
      </ConfirmDialog>
      <Section title="Details">
        <dl className="kv">
          <dt>Type</dt>
          <dd>{i.type}</dd>
          <dt>Id</dt>
          <dd>
            <code>{i.id}</code>
          </dd>
          <dt>Created</dt>
          <dd>
            <DateTime value={i.created_at} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <DateTime value={i.updated_at} />
          </dd>
          <dt>Settings</dt>
          <dd className="muted">
            write-only: they may hold credentials and CA keys, so no answer carries them
          </dd>
        </dl>
      </Section>
      <Section title="CA chain">
        {chain.isPending ? <Loading what="Decoding the CA chain" /> : null}
        {chain.isError ? <ErrorBox error={chain.error} /> : null}
        {chain.data ? (
          <DecodedChain
            certificates={chain.data.chain}
            label="CA chain"
            undecodable={chain.data.chain_undecodable}
          />
        ) : null}
      </Section>
    </>
  );
}
