import { type ReactNode, useId, useState } from 'react';
import type { Response200 } from '../api';
import { fileNameOf, pemToDer, saveFile } from '../download';
import { relativeTime } from '../expiry';
import { DateTime } from './common';
import { Copyable } from './copyable';
import './data-views.css';

export type Details = Response200<'/api/v1/certificates/{id}/versions/{version_id}/details'>['certificate'];

/** Key usage and extended key usage by the labels OpenSSL prints, so both read the same. */
const KEY_USAGE: Record<string, string> = {
  digitalSignature: 'Digital Signature',
  contentCommitment: 'Non Repudiation',
  keyEncipherment: 'Key Encipherment',
  dataEncipherment: 'Data Encipherment',
  keyAgreement: 'Key Agreement',
  keyCertSign: 'Certificate Sign',
  cRLSign: 'CRL Sign',
  encipherOnly: 'Encipher Only',
  decipherOnly: 'Decipher Only',
};
const EKU: Record<string, string> = {
  serverAuth: 'TLS Web Server Authentication',
  clientAuth: 'TLS Web Client Authentication',
  codeSigning: 'Code Signing',
  emailProtection: 'E-mail Protection',
  timeStamping: 'Time Stamping',
  OCSPSigning: 'OCSP Signing',
};

/** Hex as OpenSSL prints identifiers and fingerprints: upper case, bytes separated by colons. */
export const colonHex = (hex: string): string =>
  (hex.length % 2 === 1 ? `0${hex}` : hex).toUpperCase().match(/../g)?.join(':') ?? '';

function List({ items, empty = '—' }: { items: readonly string[]; empty?: string }) {
  if (items.length === 0) return <span className="muted">{empty}</span>;
  if (items.length === 1) return <>{items[0]}</>;
  return (
    <ul className="plain">
      {items.map((item) => (
        <li key={item}>{item}</li>
      ))}
    </ul>
  );
}

/** How far through its validity a certificate is, as a bar with the dates and what remains. */
function Validity({ from, to, now = new Date() }: { from: string; to: string; now?: Date }) {
  const start = new Date(from).getTime();
  const end = new Date(to).getTime();
  const elapsed = Math.min(1, Math.max(0, (now.getTime() - start) / Math.max(1, end - start)));
  const state =
    now.getTime() < start
      ? 'not yet valid'
      : now.getTime() > end
        ? 'expired'
        : `${Math.round(elapsed * 100)} % used`;
  const id = useId();
  return (
    <div className="validity">
      <DateTime value={from} /> → <DateTime value={to} />{' '}
      <span className="muted">({relativeTime(to, now)})</span>
      <progress id={id} max={100} value={Math.round(elapsed * 100)} aria-label={`Validity: ${state}`} />
      <span className="muted">{state}</span>
    </div>
  );
}

function Row({ term, children }: { term: string; children: ReactNode }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </>
  );
}

/** Every field of one decoded certificate (core's describeCertificate). */
export function CertificateFields({ d }: { d: Details }) {
  const sans = d.subject_alt_names;
  const bc = d.basic_constraints;
  const key = d.public_key;
  return (
    <div className="decoded">
      <h3>Names</h3>
      <dl className="kv">
        <Row term="Subject">
          <Copyable value={d.subject.text} label="subject" />
        </Row>
        <Row term="Issuer">
          <Copyable value={d.issuer.text} label="issuer" />
          {d.self_signed ? <span className="muted"> (self-signed)</span> : null}
        </Row>
        <Row term="Serial number">
          <Copyable value={d.serial_number} label="serial number" shown={colonHex(d.serial_number)} />
        </Row>
        <Row term="Version">{d.version}</Row>
      </dl>
      <h3>Validity</h3>
      <Validity from={d.not_before} to={d.not_after} />
      <h3>Subject alternative names</h3>
      <dl className="kv">
        <Row term="DNS names">
          <List items={sans.dns} />
        </Row>
        <Row term="IP addresses">
          <List items={sans.ip} />
        </Row>
        <Row term="E-mail addresses">
          <List items={sans.email} />
        </Row>
        <Row term="URIs">
          <List items={sans.uri} />
        </Row>
        {sans.other.length > 0 ? (
          <Row term="Other names">
            <List items={sans.other} />
          </Row>
        ) : null}
      </dl>
      <h3>Key and usage</h3>
      <dl className="kv">
        <Row term="Public key">
          {key.algorithm === 'EC'
            ? `EC ${key.curve ?? ''} (${key.size} bit)`
            : `${key.algorithm} (${key.size} bit)`}
        </Row>
        <Row term="Signature algorithm">{d.signature_algorithm}</Row>
        <Row term="Key usage">
          {d.key_usage ? (
            d.key_usage.map((k) => KEY_USAGE[k] ?? k).join(', ')
          ) : (
            <span className="muted">—</span>
          )}
        </Row>
        <Row term="Extended key usage">
          {d.extended_key_usage ? (
            d.extended_key_usage.map((k) => EKU[k] ?? k).join(', ')
          ) : (
            <span className="muted">—</span>
          )}
        </Row>
        <Row term="Basic constraints">
          {bc ? (
            <>
              CA: {bc.ca ? 'yes' : 'no'}
              {bc.path_length !== null
                ? `, path length ${bc.path_length}`
                : bc.ca
                  ? ', no path length limit'
                  : ''}
              {bc.critical ? ' (critical)' : ''}
            </>
          ) : (
            <span className="muted">—</span>
          )}
        </Row>
        <Row term="Policies">
          <List items={d.policies} />
        </Row>
      </dl>
      <h3>Identifiers and fingerprints</h3>
      <dl className="kv">
        <Row term="Subject key identifier">
          {d.subject_key_identifier ? (
            <Copyable value={colonHex(d.subject_key_identifier)} label="subject key identifier" />
          ) : (
            <span className="muted">—</span>
          )}
        </Row>
        <Row term="Authority key identifier">
          {d.authority_key_identifier ? (
            <Copyable value={colonHex(d.authority_key_identifier)} label="authority key identifier" />
          ) : (
            <span className="muted">—</span>
          )}
        </Row>
        <Row term="SHA-256 fingerprint">
          <Copyable value={colonHex(d.fingerprint_sha256)} label="SHA-256 fingerprint" />
        </Row>
        <Row term="SHA-1 fingerprint">
          <Copyable value={colonHex(d.fingerprint_sha1)} label="SHA-1 fingerprint" />
        </Row>
      </dl>
      <h3>Revocation and issuer information</h3>
      <dl className="kv">
        <Row term="CRL distribution points">
          <List items={d.crl_distribution_points} />
        </Row>
        <Row term="OCSP">
          <List items={d.ocsp_urls} />
        </Row>
        <Row term="CA issuers">
          <List items={d.ca_issuer_urls} />
        </Row>
      </dl>
      <details>
        <summary>Extensions ({d.extensions.length})</summary>
        <ul className="plain">
          {d.extensions.map((e) => (
            <li key={e.oid}>
              {e.name ?? 'unknown'} <code className="muted">{e.oid}</code>
              {e.critical ? ' (critical)' : ''}
            </li>
          ))}
        </ul>
      </details>
    </div>
  );
}

/** PEM and DER downloads of one certificate, made from what the page holds. */
export function CertificateDownloads({ d, name }: { d: Details; name: string }) {
  const file = fileNameOf(name);
  return (
    <>
      <button
        type="button"
        className="button"
        onClick={() => saveFile(new Blob([d.pem], { type: 'application/x-pem-file' }), `${file}.pem`)}
      >
        Download PEM
      </button>
      <button
        type="button"
        className="button"
        onClick={() =>
          saveFile(new Blob([pemToDer(d.pem)], { type: 'application/pkix-cert' }), `${file}.cer`)
        }
      >
        Download DER
      </button>
    </>
  );
}

/** A short name for a certificate of a chain: its subject's CN, else the whole subject. */
export const shortName = (d: Details): string =>
  d.subject.attributes.find((a) => a.type === 'CN')?.value ?? d.subject.text;

/**
 * A certificate and its chain, one at a time: buttons name each certificate of the path (leaf
 * first), the chosen one is decoded below with its own downloads. `extra` adds actions for
 * the whole (chain, PKCS#12).
 */
export function DecodedChain({
  certificates,
  label,
  extra,
  undecodable = 0,
}: {
  certificates: readonly Details[];
  label: string;
  extra?: ReactNode;
  undecodable?: number;
}) {
  const [chosen, setChosen] = useState(0);
  const d = certificates[Math.min(chosen, certificates.length - 1)];
  if (!d) return <p className="muted">No certificate to show.</p>;
  return (
    <div>
      {certificates.length > 1 ? (
        <fieldset className="chain-tabs">
          <legend className="sr-only">{`${label}: certificate shown`}</legend>
          {certificates.map((c, i) => (
            <button
              key={c.fingerprint_sha256 + String(i)}
              type="button"
              className="button"
              aria-pressed={i === chosen}
              onClick={() => setChosen(i)}
            >
              {shortName(c)}
            </button>
          ))}
        </fieldset>
      ) : null}
      {undecodable > 0 ? (
        <p className="muted">
          {undecodable} more certificate{undecodable === 1 ? '' : 's'} of this chain could not be read and
          {undecodable === 1 ? ' is' : ' are'} not shown.
        </p>
      ) : null}
      <div className="actions">
        <CertificateDownloads d={d} name={shortName(d)} />
        {extra}
      </div>
      <CertificateFields d={d} />
    </div>
  );
}
