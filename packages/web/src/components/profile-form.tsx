import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import { errorFor, fieldErrors } from '../form-errors';
import { listOf } from '../format';
import { ActionButton, Notice, Section } from './common';
import { FormField, FormProblem } from './form-field';
import { Picker, type PickerResource } from './picker';

const RSA_SIZES = [2048, 3072, 4096] as const;
const EC_CURVES = ['P-256', 'P-384', 'P-521'] as const;
const EKUS = ['serverAuth', 'clientAuth', 'codeSigning', 'emailProtection', 'timeStamping'] as const;
const CHALLENGES = ['http-01', 'dns-01', 'tls-alpn-01'] as const;

const DEFAULTS = [
  ['issuer_id', 'Issuer', 'issuers'],
  ['owner_id', 'Owner', 'owners'],
  ['team_id', 'Team', 'teams'],
  ['renewal_policy_id', 'Renewal policy', 'renewal-policies'],
] as const satisfies readonly (readonly [string, string, PickerResource])[];
type DefaultKey = (typeof DEFAULTS)[number][0];

interface Draft {
  name: string;
  description: string;
  max_validity_days: string;
  key_generation: 'server' | 'agent';
  rsa: number[];
  ec: string[];
  ed25519: boolean;
  ekus: string[];
  required_csr_attributes: string;
  must_staple: boolean;
  allow_ip_sans: boolean;
  enrollment: Record<DefaultKey, string>;
  acme: {
    enabled: boolean;
    path_id: string;
    auth_mode: 'challenge' | 'trust_authenticated';
    eab_required: boolean;
    challenge_types: string[];
    terms_of_service_url: string;
    website_url: string;
    orders_per_account_per_hour: string;
    accounts_per_ip_per_hour: string;
  };
  est: {
    enabled: boolean;
    path_id: string;
    server_keygen: boolean;
    mtls_trust_bundle_path: string;
    require_channel_binding: boolean;
    username: string;
    password: string;
  };
  scep: {
    enabled: boolean;
    path_id: string;
    mtls_trust_bundle_path: string;
    challenge_password: string;
    mdm_enabled: boolean;
    mdm_trust_bundle_path: string;
    mdm_audience: string;
    mdm_max_lifetime_seconds: string;
    mdm_require_compliance: boolean;
  };
}

const empty = (): Draft => ({
  name: '',
  description: '',
  max_validity_days: '',
  key_generation: 'server',
  rsa: [],
  ec: [],
  ed25519: false,
  ekus: [],
  required_csr_attributes: '',
  must_staple: false,
  allow_ip_sans: false,
  enrollment: { issuer_id: '', owner_id: '', team_id: '', renewal_policy_id: '' },
  acme: {
    enabled: false,
    path_id: '',
    auth_mode: 'challenge',
    eab_required: false,
    challenge_types: [...CHALLENGES],
    terms_of_service_url: '',
    website_url: '',
    orders_per_account_per_hour: '',
    accounts_per_ip_per_hour: '',
  },
  est: {
    enabled: false,
    path_id: '',
    server_keygen: false,
    mtls_trust_bundle_path: '',
    require_channel_binding: false,
    username: '',
    password: '',
  },
  scep: {
    enabled: false,
    path_id: '',
    mtls_trust_bundle_path: '',
    challenge_password: '',
    mdm_enabled: false,
    mdm_trust_bundle_path: '',
    mdm_audience: '',
    mdm_max_lifetime_seconds: '',
    mdm_require_compliance: false,
  },
});

/** A whole number typed in a field; other text is sent as it is, so the API names the field. */
const num = (text: string): number | string =>
  /^\d+$/.test(text.trim()) ? Number(text.trim()) : text.trim();
const optional = <K extends string>(key: K, value: unknown) =>
  value === '' || value === undefined ? {} : ({ [key]: value } as Record<K, unknown>);

/** The profile as the API takes it: only what the form sets, empty text fields left to their defaults. */
function bodyOf(d: Draft) {
  const algorithms = [
    ...(d.rsa.length > 0 ? [{ algorithm: 'RSA' as const, sizes: d.rsa }] : []),
    ...(d.ec.length > 0 ? [{ algorithm: 'ECDSA' as const, curves: d.ec }] : []),
    ...(d.ed25519 ? [{ algorithm: 'Ed25519' as const }] : []),
  ];
  const path = (p: string) => optional('path_id', p.trim());
  return {
    name: d.name.trim(),
    ...optional('description', d.description.trim()),
    ...optional('max_validity_days', d.max_validity_days.trim() ? num(d.max_validity_days) : ''),
    key_generation: d.key_generation,
    allowed_key_algorithms: algorithms,
    allowed_ekus: d.ekus,
    required_csr_attributes: listOf(d.required_csr_attributes),
    must_staple: d.must_staple,
    allow_ip_sans: d.allow_ip_sans,
    enrollment: Object.fromEntries(
      DEFAULTS.map(([key]) => [key, d.enrollment[key] === '' ? null : d.enrollment[key]]),
    ),
    acme: {
      enabled: d.acme.enabled,
      ...path(d.acme.path_id),
      auth_mode: d.acme.auth_mode,
      eab_required: d.acme.eab_required,
      challenge_types: d.acme.challenge_types,
      terms_of_service_url: d.acme.terms_of_service_url.trim() || null,
      website_url: d.acme.website_url.trim() || null,
      rate_limits: {
        ...optional(
          'orders_per_account_per_hour',
          d.acme.orders_per_account_per_hour.trim() ? num(d.acme.orders_per_account_per_hour) : '',
        ),
        ...optional(
          'accounts_per_ip_per_hour',
          d.acme.accounts_per_ip_per_hour.trim() ? num(d.acme.accounts_per_ip_per_hour) : '',
        ),
      },
    },
    est: {
      enabled: d.est.enabled,
      ...path(d.est.path_id),
      server_keygen: d.est.server_keygen,
      mtls_trust_bundle_path: d.est.mtls_trust_bundle_path.trim() || null,
      require_channel_binding: d.est.require_channel_binding,
      ...(d.est.username.trim() || d.est.password
        ? { basic_credentials: [{ username: d.est.username.trim(), password: d.est.password }] }
        : {}),
    },
    scep: {
      enabled: d.scep.enabled,
      ...path(d.scep.path_id),
      mtls_trust_bundle_path: d.scep.mtls_trust_bundle_path.trim() || null,
      ...optional('challenge_password', d.scep.challenge_password),
      mdm: {
        enabled: d.scep.mdm_enabled,
        trust_bundle_path: d.scep.mdm_trust_bundle_path.trim() || null,
        audience: d.scep.mdm_audience.trim() || null,
        ...optional(
          'max_lifetime_seconds',
          d.scep.mdm_max_lifetime_seconds.trim() ? num(d.scep.mdm_max_lifetime_seconds) : '',
        ),
        require_compliance: d.scep.mdm_require_compliance,
      },
    },
  };
}

function Check({
  label,
  checked,
  onChange,
  hint,
}: {
  label: ReactNode;
  checked: boolean;
  onChange: (v: boolean) => void;
  hint?: string;
}) {
  return (
    <label className="check">
      <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} /> {label}
      {hint ? <span className="muted"> — {hint}</span> : null}
    </label>
  );
}

/** Checkboxes choosing some of `options`; the API's error for the list sits under them. */
function Choices<T extends string | number>({
  legend,
  options,
  value,
  onChange,
  error,
  hint,
}: {
  legend: string;
  options: readonly T[];
  value: readonly T[];
  onChange: (v: T[]) => void;
  error?: string | undefined;
  hint?: string;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {hint ? <p className="hint">{hint}</p> : null}
      <div className="checks">
        {options.map((o) => (
          <Check
            key={String(o)}
            label={String(o)}
            checked={value.includes(o)}
            onChange={(on) => onChange(on ? [...value, o] : value.filter((v) => v !== o))}
          />
        ))}
      </div>
      {error ? <span className="field-error">{error}</span> : null}
    </fieldset>
  );
}

/**
 * A new certificate profile, complete: validity, key generation and the key algorithms, EKUs
 * and CSR attributes it allows, must-staple and IP SANs, what the enrollment protocols create,
 * and every field of the ACME, EST and SCEP blocks. Secrets (EST credential, SCEP challenge
 * password) are write-only and leave the page once saved. The API's error sits at its field.
 */
export function NewProfile() {
  const client = useQueryClient();
  const allowed = usePermission('profile.write');
  const [d, setD] = useState<Draft>(empty);
  const [created, setCreated] = useState('');
  const save = useMutation({
    mutationFn: () => api.post('/api/v1/profiles', { body: bodyOf(d) as never }),
    onSuccess: async (profile) => {
      setCreated(profile?.name ?? d.name);
      // Secrets leave the page with the rest of the form.
      setD(empty());
      await client.invalidateQueries({ queryKey: ['profiles'] });
    },
  });
  const errors = fieldErrors(save.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated('');
    save.mutate();
  };
  const text = (
    label: string,
    field: string,
    value: string,
    set: (v: string) => void,
    options: { hint?: string; type?: string; required?: boolean; numeric?: boolean } = {},
  ) => (
    <FormField label={label} hint={options.hint} error={errorFor(errors, field)}>
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type={options.type ?? 'text'}
          value={value}
          required={options.required}
          inputMode={options.numeric ? 'numeric' : undefined}
          autoComplete={options.type === 'password' ? 'new-password' : 'off'}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onChange={(e) => set(e.target.value)}
        />
      )}
    </FormField>
  );
  const acme = (patch: Partial<Draft['acme']>) => setD({ ...d, acme: { ...d.acme, ...patch } });
  const est = (patch: Partial<Draft['est']>) => setD({ ...d, est: { ...d.est, ...patch } });
  const scep = (patch: Partial<Draft['scep']>) => setD({ ...d, scep: { ...d.scep, ...patch } });
  return (
    <Section title="New profile">
      <Notice message={created ? `Created ${created}.` : null} />
      <FormProblem error={save.error} shown={SHOWN} />
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit} aria-label="New profile">
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          {text('Name', 'name', d.name, (name) => setD({ ...d, name }), { required: true })}
          {text('Description', 'description', d.description, (description) => setD({ ...d, description }))}
          {text(
            'Max validity (days)',
            'max_validity_days',
            d.max_validity_days,
            (max_validity_days) => setD({ ...d, max_validity_days }),
            { hint: '1–3650; default 397', numeric: true },
          )}
          <FormField
            label="Key generation"
            hint="server: the server makes the key (PKCS#12 export possible); agent: the agent sends a CSR"
            error={errorFor(errors, 'key_generation')}
          >
            {({ id, describedBy, invalid }) => (
              <select
                id={id}
                value={d.key_generation}
                aria-describedby={describedBy}
                aria-invalid={invalid}
                onChange={(e) => setD({ ...d, key_generation: e.target.value as Draft['key_generation'] })}
              >
                <option value="server">on the server</option>
                <option value="agent">by the agent (CSR)</option>
              </select>
            )}
          </FormField>
          <fieldset>
            <legend>Allowed key algorithms</legend>
            <p className="hint">None chosen: any algorithm the server supports.</p>
            <Choices
              legend="RSA key sizes"
              options={RSA_SIZES}
              value={d.rsa}
              onChange={(rsa) => setD({ ...d, rsa })}
            />
            <Choices
              legend="ECDSA curves"
              options={EC_CURVES}
              value={d.ec}
              onChange={(ec) => setD({ ...d, ec })}
            />
            <Check label="Ed25519" checked={d.ed25519} onChange={(ed25519) => setD({ ...d, ed25519 })} />
            {errorFor(errors, 'allowed_key_algorithms') ? (
              <span className="field-error">{errorFor(errors, 'allowed_key_algorithms')}</span>
            ) : null}
          </fieldset>
          <Choices
            legend="Allowed extended key usages"
            hint="None chosen: the default usages."
            options={EKUS}
            value={d.ekus}
            onChange={(ekus) => setD({ ...d, ekus })}
            error={errorFor(errors, 'allowed_ekus')}
          />
          {text(
            'Required CSR attributes',
            'required_csr_attributes',
            d.required_csr_attributes,
            (required_csr_attributes) => setD({ ...d, required_csr_attributes }),
            { hint: 'comma-separated: DN attribute names (O, OU …), EKU names or serialNumber' },
          )}
          <Check
            label="Must-staple (TLS feature, RFC 7633)"
            checked={d.must_staple}
            onChange={(must_staple) => setD({ ...d, must_staple })}
          />
          <Check
            label="Allow IP address SANs"
            checked={d.allow_ip_sans}
            onChange={(allow_ip_sans) => setD({ ...d, allow_ip_sans })}
          />
          <fieldset>
            <legend>Certificates the enrollment protocols create</legend>
            <p className="hint">Required once ACME, EST or SCEP is enabled.</p>
            {DEFAULTS.map(([key, label, resource]) => (
              <div key={key}>
                <Picker
                  resource={resource}
                  label={label}
                  value={d.enrollment[key]}
                  emptyLabel="none"
                  onChange={(id) => setD({ ...d, enrollment: { ...d.enrollment, [key]: id } })}
                />
                {errorFor(errors, `enrollment.${key}`) ? (
                  <span className="field-error">{errorFor(errors, `enrollment.${key}`)}</span>
                ) : null}
              </div>
            ))}
          </fieldset>
          <fieldset>
            <legend>ACME (RFC 8555)</legend>
            <Check label="ACME enabled" checked={d.acme.enabled} onChange={(enabled) => acme({ enabled })} />
            {text('ACME path id', 'acme.path_id', d.acme.path_id, (path_id) => acme({ path_id }), {
              hint: "empty: the profile's id addresses it (/acme/profile/<path id>)",
            })}
            <FormField label="Identifiers proven by" error={errorFor(errors, 'acme.auth_mode')}>
              {({ id, describedBy, invalid }) => (
                <select
                  id={id}
                  value={d.acme.auth_mode}
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  onChange={(e) => acme({ auth_mode: e.target.value as Draft['acme']['auth_mode'] })}
                >
                  <option value="challenge">challenges (http-01, dns-01, tls-alpn-01)</option>
                  <option value="trust_authenticated">the authenticated account alone (private PKI)</option>
                </select>
              )}
            </FormField>
            <Check
              label="External account binding required"
              checked={d.acme.eab_required}
              onChange={(eab_required) => acme({ eab_required })}
            />
            <Choices
              legend="Challenge types offered"
              options={CHALLENGES}
              value={d.acme.challenge_types}
              onChange={(challenge_types) => acme({ challenge_types })}
              error={errorFor(errors, 'acme.challenge_types')}
            />
            {text(
              'Terms of service URL',
              'acme.terms_of_service_url',
              d.acme.terms_of_service_url,
              (terms_of_service_url) => acme({ terms_of_service_url }),
            )}
            {text('Website URL', 'acme.website_url', d.acme.website_url, (website_url) =>
              acme({ website_url }),
            )}
            {text(
              'New orders per account per hour',
              'acme.rate_limits.orders_per_account_per_hour',
              d.acme.orders_per_account_per_hour,
              (orders_per_account_per_hour) => acme({ orders_per_account_per_hour }),
              { hint: 'empty: 300', numeric: true },
            )}
            {text(
              'New accounts per client address per hour',
              'acme.rate_limits.accounts_per_ip_per_hour',
              d.acme.accounts_per_ip_per_hour,
              (accounts_per_ip_per_hour) => acme({ accounts_per_ip_per_hour }),
              { hint: 'empty: 50', numeric: true },
            )}
          </fieldset>
          <fieldset>
            <legend>EST (RFC 7030)</legend>
            <Check label="EST enabled" checked={d.est.enabled} onChange={(enabled) => est({ enabled })} />
            {text('EST path id', 'est.path_id', d.est.path_id, (path_id) => est({ path_id }), {
              hint: "empty: the profile's id addresses it",
            })}
            <Check
              label="Server-side key generation"
              checked={d.est.server_keygen}
              onChange={(server_keygen) => est({ server_keygen })}
            />
            {text(
              'EST client CA bundle path',
              'est.mtls_trust_bundle_path',
              d.est.mtls_trust_bundle_path,
              (mtls_trust_bundle_path) => est({ mtls_trust_bundle_path }),
              { hint: 'a PEM file on the server: CAs of TLS client certificates (mutual-TLS routes)' },
            )}
            <Check
              label="Require TLS channel binding (RFC 9266)"
              checked={d.est.require_channel_binding}
              onChange={(require_channel_binding) => est({ require_channel_binding })}
            />
            {text('EST username', 'est.basic_credentials', d.est.username, (username) => est({ username }), {
              hint: 'HTTP Basic credential; no ":"',
            })}
            {text('EST password', 'est.basic_credentials', d.est.password, (password) => est({ password }), {
              type: 'password',
              hint: 'at least 12 characters; stored hashed and never shown again',
            })}
          </fieldset>
          <fieldset>
            <legend>SCEP (RFC 8894)</legend>
            <Check label="SCEP enabled" checked={d.scep.enabled} onChange={(enabled) => scep({ enabled })} />
            {text('SCEP path id', 'scep.path_id', d.scep.path_id, (path_id) => scep({ path_id }), {
              hint: "empty: the profile's id addresses it",
            })}
            {text(
              'SCEP client CA bundle path',
              'scep.mtls_trust_bundle_path',
              d.scep.mtls_trust_bundle_path,
              (mtls_trust_bundle_path) => scep({ mtls_trust_bundle_path }),
              { hint: 'a PEM file on the server (mutual-TLS routes)' },
            )}
            {text(
              'Challenge password',
              'scep.challenge_password',
              d.scep.challenge_password,
              (challenge_password) => scep({ challenge_password }),
              { type: 'password', hint: 'at least 8 characters; stored hashed and never shown again' },
            )}
            <Check
              label="Device-management signed challenges"
              checked={d.scep.mdm_enabled}
              onChange={(mdm_enabled) => scep({ mdm_enabled })}
            />
            {text(
              'Device manager certificates path',
              'scep.mdm.trust_bundle_path',
              d.scep.mdm_trust_bundle_path,
              (mdm_trust_bundle_path) => scep({ mdm_trust_bundle_path }),
              { hint: "a PEM file on the server: the device manager's signing certificates" },
            )}
            {text('Challenge audience', 'scep.mdm.audience', d.scep.mdm_audience, (mdm_audience) =>
              scep({ mdm_audience }),
            )}
            {text(
              'Challenge lifetime (seconds)',
              'scep.mdm.max_lifetime_seconds',
              d.scep.mdm_max_lifetime_seconds,
              (mdm_max_lifetime_seconds) => scep({ mdm_max_lifetime_seconds }),
              { hint: '60–86400; empty: the default', numeric: true },
            )}
            <Check
              label="Require a compliant device"
              checked={d.scep.mdm_require_compliance}
              onChange={(mdm_require_compliance) => scep({ mdm_require_compliance })}
            />
          </fieldset>
          <ActionButton {...allowed} type="submit" className="button primary" disabled={save.isPending}>
            Create profile
          </ActionButton>
        </fieldset>
      </form>
    </Section>
  );
}

/** Every field prefix the form shows an input for; an error elsewhere is listed above it. */
const SHOWN = [
  'name',
  'description',
  'max_validity_days',
  'key_generation',
  'allowed_key_algorithms',
  'allowed_ekus',
  'required_csr_attributes',
  'enrollment',
  'acme',
  'est',
  'scep',
];
