import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { api } from '../api';
import { DateTime, ErrorBox, Loading, Section, StatusBadge } from '../components/common';
import { DecodedChain } from '../components/decoded-certificate';
import { iso } from '../format';
import { Named, useNames } from '../names';

/** A certificate found by a scan or an agent: where it was seen, and decoded with its served chain. */
export default function DiscoveredCertificate() {
  const { id } = useParams({ from: '/app/discovery/certificates/$id' });
  const found = useQuery({
    queryKey: ['discovered', 'one', id],
    queryFn: () => api.get('/api/v1/discovery/certificates/{id}', { params: { id } }),
  });
  const details = useQuery({
    queryKey: ['discovered', 'one', id, 'details'],
    queryFn: () => api.get('/api/v1/discovery/certificates/{id}/details', { params: { id } }),
  });
  const names = useNames(found.data ? [found.data] : undefined, (f) => [
    ['certificate', f.certificate_id],
    ...f.sightings.map((s) => ['agent', s.source] as const),
  ]);
  if (found.isPending) return <Loading what="Loading the discovered certificate" />;
  if (found.isError) return <ErrorBox error={found.error} />;
  const f = found.data;
  return (
    <>
      <p>
        <Link to="/discovery">← Discovery</Link>
      </p>
      <h1>
        {f.subject || f.fingerprint_sha256} <StatusBadge status={f.status} />
      </h1>
      <Section title="Where it was seen">
        <dl className="kv">
          <dt>Managed as</dt>
          <dd>
            <Named names={names} kind="certificate" id={f.certificate_id} />
          </dd>
          <dt>First seen</dt>
          <dd>
            <DateTime value={iso(f.first_seen_at)} />
          </dd>
          <dt>Last seen</dt>
          <dd>
            <DateTime value={iso(f.last_seen_at)} />
          </dd>
        </dl>
        <ul className="plain">
          {f.sightings.map((s) => (
            <li key={`${s.source}-${s.address}-${s.port}-${s.sni}-${s.path}`}>
              {s.path ?? `${s.address ?? ''}:${s.port ?? ''}${s.sni ? ` (SNI ${s.sni})` : ''}`} — seen by{' '}
              <Named names={names} kind="agent" id={s.source} />, last{' '}
              <DateTime value={iso(s.last_seen_at)} />
            </li>
          ))}
        </ul>
      </Section>
      <Section title="Decoded">
        {details.isPending ? <Loading what="Decoding the certificate" /> : null}
        {details.isError ? <ErrorBox error={details.error} /> : null}
        {details.data ? (
          <DecodedChain
            certificates={[details.data.certificate, ...details.data.chain]}
            label="Served chain"
            undecodable={details.data.chain_undecodable}
          />
        ) : null}
      </Section>
    </>
  );
}
