import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import { errorFor, fieldErrors } from '../form-errors';
import { ActionButton, Notice, Section } from './common';
import { FormField, FormProblem } from './form-field';

const KEY_ALGORITHMS = ['ECDSA-P256', 'ECDSA-P384', 'RSA-2048', 'RSA-3072', 'RSA-4096', 'Ed25519'] as const;

interface Draft {
  type: 'Local' | 'ACME';
  name: string;
  enabled: boolean;
  // Local (docs/api/lifecycle.md, "The Local CA")
  key_algorithm: string;
  common_name: string;
  root_validity_days: string;
  issuing_validity_days: string;
  base_url: string;
  // ACME (docs/api/issuers.md, "Settings")
  directory_url: string;
  contact: string;
  eab_kid: string;
  eab_hmac_key: string;
  challenge_type: 'http-01' | 'dns-01';
  profile: string;
  ca_bundle_pem: string;
}

const EMPTY: Draft = {
  type: 'Local',
  name: '',
  enabled: true,
  key_algorithm: 'ECDSA-P256',
  common_name: '',
  root_validity_days: '',
  issuing_validity_days: '',
  base_url: '',
  directory_url: '',
  contact: '',
  eab_kid: '',
  eab_hmac_key: '',
  challenge_type: 'http-01',
  profile: '',
  ca_bundle_pem: '',
};

/** The fields this form has inputs for; an error on another is listed above the form. */
const SHOWN = [
  'name',
  ...[
    'key_algorithm',
    'common_name',
    'root_validity_days',
    'issuing_validity_days',
    'base_url',
    'directory_url',
    'contact',
    'eab_kid',
    'eab_hmac_key',
    'challenge_type',
    'profile',
    'ca_bundle_pem',
  ].map((k) => `config.${k}`),
];

/** A number typed in a field: sent as a number, or as the text when it is not one (the API names it). */
const numberOf = (text: string): number | string => (/^\d+$/.test(text.trim()) ? Number(text.trim()) : text);

/** The issuer's write-only config from the form: only what was filled in. */
function configOf(d: Draft): Record<string, unknown> {
  const set = (entries: [string, unknown][]) =>
    Object.fromEntries(entries.filter(([, v]) => v !== '' && v !== undefined));
  if (d.type === 'Local') {
    return set([
      ['key_algorithm', d.key_algorithm],
      ['common_name', d.common_name.trim()],
      ['root_validity_days', d.root_validity_days.trim() ? numberOf(d.root_validity_days) : ''],
      ['issuing_validity_days', d.issuing_validity_days.trim() ? numberOf(d.issuing_validity_days) : ''],
      ['base_url', d.base_url.trim()],
    ]);
  }
  const contact = d.contact
    .split(/[\s,]+/)
    .map((c) => c.trim())
    .filter(Boolean)
    .map((c) => (c.startsWith('mailto:') ? c : `mailto:${c}`));
  return set([
    ['directory_url', d.directory_url.trim()],
    ['contact', contact.length > 0 ? contact : ''],
    ['eab_kid', d.eab_kid.trim()],
    ['eab_hmac_key', d.eab_hmac_key.trim()],
    ['challenge_type', d.challenge_type],
    ['profile', d.profile.trim()],
    ['ca_bundle_pem', d.ca_bundle_pem.trim()],
  ]);
}

/**
 * A new issuer: a Local CA (key algorithm, validity of root and issuing CA, names) or an
 * external ACME CA (directory, contact, external account binding, challenge). The settings are
 * write-only: once saved, no page shows them again. The API's error appears at the field it names.
 */
export function NewIssuer() {
  const allowed = usePermission('issuer.write');
  const client = useQueryClient();
  const [d, setD] = useState<Draft>(EMPTY);
  const [created, setCreated] = useState<{ id: string; name: string } | null>(null);
  const create = useMutation({
    mutationFn: () =>
      api.post('/api/v1/issuers', {
        body: { name: d.name.trim(), type: d.type, enabled: d.enabled, config: configOf(d) },
      }),
    onSuccess: async (issuer) => {
      setCreated({ id: issuer.id, name: issuer.name });
      setD(EMPTY);
      await client.invalidateQueries({ queryKey: ['issuers'] });
    },
  });
  const errors = fieldErrors(create.error);
  const err = (key: string) => errorFor(errors, key === 'name' ? 'name' : `config.${key}`);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated(null);
    create.mutate();
  };
  const text = (
    key: keyof Draft,
    label: string,
    options: { hint?: string; type?: string; required?: boolean; inputMode?: 'numeric' } = {},
  ) => (
    <FormField label={label} hint={options.hint} error={err(key)}>
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type={options.type ?? 'text'}
          value={String(d[key])}
          required={options.required}
          inputMode={options.inputMode}
          autoComplete="off"
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onChange={(e) => setD({ ...d, [key]: e.target.value })}
        />
      )}
    </FormField>
  );
  return (
    <Section title="New issuer">
      <Notice
        message={
          created ? (
            <>
              Created{' '}
              <Link to="/issuers/$id" params={{ id: created.id }}>
                {created.name}
              </Link>
              .
            </>
          ) : null
        }
      />
      <FormProblem error={create.error} shown={SHOWN} />
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit} aria-label="New issuer">
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          {text('name', 'Name', { required: true })}
          <FormField
            label="Type"
            hint="Local: a CA this server runs; ACME: an external CA reached over RFC 8555"
          >
            {({ id, describedBy }) => (
              <select
                id={id}
                value={d.type}
                aria-describedby={describedBy}
                onChange={(e) => setD({ ...d, type: e.target.value as Draft['type'] })}
              >
                <option value="Local">Local CA</option>
                <option value="ACME">External ACME CA</option>
              </select>
            )}
          </FormField>
          {d.type === 'Local' ? (
            <fieldset>
              <legend>Local CA</legend>
              <FormField
                label="Key algorithm"
                hint="of the root and the issuing CA"
                error={err('key_algorithm')}
              >
                {({ id, describedBy, invalid }) => (
                  <select
                    id={id}
                    value={d.key_algorithm}
                    aria-describedby={describedBy}
                    aria-invalid={invalid}
                    onChange={(e) => setD({ ...d, key_algorithm: e.target.value })}
                  >
                    {KEY_ALGORITHMS.map((k) => (
                      <option key={k} value={k}>
                        {k}
                      </option>
                    ))}
                  </select>
                )}
              </FormField>
              {text('common_name', 'Common name', { hint: 'default: the issuer name' })}
              {text('root_validity_days', 'Root validity (days)', {
                hint: 'default 3650',
                inputMode: 'numeric',
              })}
              {text('issuing_validity_days', 'Issuing CA validity (days)', {
                hint: "default 1825; at most the root's",
                inputMode: 'numeric',
              })}
              {text('base_url', 'Public base URL', {
                hint: 'https://…, written into CRL and OCSP URLs; default: the server’s',
              })}
            </fieldset>
          ) : (
            <fieldset>
              <legend>External ACME CA</legend>
              {text('directory_url', 'Directory URL', {
                required: true,
                hint: 'the CA’s RFC 8555 directory',
              })}
              {text('contact', 'Contact e-mail addresses', { hint: 'comma-separated; sent as mailto: URLs' })}
              {text('eab_kid', 'EAB key id', { hint: 'external account binding, when the CA asks for one' })}
              {text('eab_hmac_key', 'EAB HMAC key', { type: 'password', hint: 'base64url; write-only' })}
              <FormField label="Challenge" error={err('challenge_type')}>
                {({ id, describedBy, invalid }) => (
                  <select
                    id={id}
                    value={d.challenge_type}
                    aria-describedby={describedBy}
                    aria-invalid={invalid}
                    onChange={(e) =>
                      setD({ ...d, challenge_type: e.target.value as Draft['challenge_type'] })
                    }
                  >
                    <option value="http-01">http-01</option>
                    <option value="dns-01">dns-01 (needs a DNS provider)</option>
                  </select>
                )}
              </FormField>
              {text('profile', 'ACME profile', { hint: 'one the directory advertises; optional' })}
              <FormField
                label="CA bundle (PEM)"
                hint="trusted for the directory’s TLS instead of the system roots; optional"
                error={err('ca_bundle_pem')}
              >
                {({ id, describedBy, invalid }) => (
                  <textarea
                    id={id}
                    rows={3}
                    value={d.ca_bundle_pem}
                    aria-describedby={describedBy}
                    aria-invalid={invalid}
                    onChange={(e) => setD({ ...d, ca_bundle_pem: e.target.value })}
                  />
                )}
              </FormField>
            </fieldset>
          )}
          <label className="check">
            <input
              type="checkbox"
              checked={d.enabled}
              onChange={(e) => setD({ ...d, enabled: e.target.checked })}
            />{' '}
            Enabled
          </label>
          <ActionButton {...allowed} type="submit" className="button primary" disabled={create.isPending}>
            Create issuer
          </ActionButton>
        </fieldset>
      </form>
    </Section>
  );
}
