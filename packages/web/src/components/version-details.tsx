import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { fileNameOf, saveFile } from '../download';
import { ActionButton, ErrorBox, Loading, Notice } from './common';
import { DecodedChain } from './decoded-certificate';
import { Pkcs12Dialog } from './pkcs12-dialog';

type Version = Response200<'/api/v1/certificates/{id}/versions'>['data'][number];

/**
 * One version decoded with its chain, and its downloads: each certificate as PEM or DER, the
 * chain, the certificate with its chain, and PKCS#12 (key included) for the current version
 * when the server holds its key.
 */
export function VersionDetails({
  certificateId,
  name,
  version,
}: {
  certificateId: string;
  name: string;
  version: Version;
}) {
  const exportKey = usePermission('cert.export_key');
  const [pkcs12, setPkcs12] = useState(false);
  const [notice, setNotice] = useState('');
  const details = useQuery({
    queryKey: ['certificate', certificateId, 'version', version.id, 'details'],
    queryFn: () =>
      api.get('/api/v1/certificates/{id}/versions/{version_id}/details', {
        params: { id: certificateId, version_id: version.id },
      }),
  });
  if (details.isPending) return <Loading what="Decoding the certificate" />;
  if (details.isError) return <ErrorBox error={details.error} />;
  const d = details.data;
  const file = fileNameOf(name);
  const pem = (text: string, suffix: string) =>
    saveFile(new Blob([text], { type: 'application/x-pem-file' }), `${file}${suffix}.pem`);
  const heldHere = d.current && d.private_key_held;
  return (
    <>
      <Notice message={notice} />
      <div className="actions">
        <button
          type="button"
          className="button"
          onClick={() => pem(version.chain_pem, '-chain')}
          disabled={!version.chain_pem}
        >
          Download chain (PEM)
        </button>
        <button
          type="button"
          className="button"
          onClick={() => pem(version.cert_pem + version.chain_pem, '-fullchain')}
        >
          Download certificate with chain (PEM)
        </button>
        {heldHere ? (
          <ActionButton {...exportKey} onClick={() => setPkcs12(true)}>
            Download PKCS#12 (with key)
          </ActionButton>
        ) : (
          <span className="muted">
            {d.private_key_held
              ? 'PKCS#12: only the current version is exported with its key.'
              : 'PKCS#12: the key was generated where the certificate is used; the server does not hold it.'}
          </span>
        )}
      </div>
      <DecodedChain
        certificates={[d.certificate, ...d.chain]}
        label={`Version ${version.serial_number}`}
        undecodable={d.chain_undecodable}
      />
      <Pkcs12Dialog
        open={pkcs12}
        certificateId={certificateId}
        name={name}
        onClose={(message) => {
          setPkcs12(false);
          if (message) setNotice(message);
        }}
      />
    </>
  );
}
