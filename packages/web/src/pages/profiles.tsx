import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { ActionButton, DateTime, ErrorBox, Field, Section } from '../components/common';
import { Picker, type PickerResource } from '../components/picker';
import { ResourceList } from '../components/resource-list';

type Row = Response200<'/api/v1/profiles'>['data'][number];

interface Block {
  enabled: boolean;
  path_id: string;
}

const DEFAULTS = [
  ['issuer_id', 'Issuer', 'issuers'],
  ['owner_id', 'Owner', 'owners'],
  ['team_id', 'Team', 'teams'],
  ['renewal_policy_id', 'Renewal policy', 'renewal-policies'],
] as const satisfies readonly (readonly [string, string, PickerResource])[];
type DefaultKey = (typeof DEFAULTS)[number][0];

interface Draft {
  enrollment: Record<DefaultKey, string>;
  name: string;
  description: string;
  max_validity_days: string;
  acme: Block & { eab_required: boolean };
  est: Block & { server_keygen: boolean };
  scep: Block & { challenge_password: string };
}

const empty: Draft = {
  enrollment: { issuer_id: '', owner_id: '', team_id: '', renewal_policy_id: '' },
  name: '',
  description: '',
  max_validity_days: '',
  acme: { enabled: false, path_id: '', eab_required: false },
  est: { enabled: false, path_id: '', server_keygen: false },
  scep: { enabled: false, path_id: '', challenge_password: '' },
};

function enrollment(r: Row): string {
  const on = (['acme', 'est', 'scep'] as const).filter((p) => r[p]?.enabled).map((p) => p.toUpperCase());
  return on.join(', ') || 'none';
}

function Check({
  label,
  checked,
  onChange,
}: {
  label: string;
  checked: boolean;
  onChange: (v: boolean) => void;
}) {
  return (
    <div className="field">
      <label>
        <input type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} /> {label}
      </label>
    </div>
  );
}

/** A new profile with its enrollment blocks; the SCEP challenge password is write-only. */
function NewProfile() {
  const client = useQueryClient();
  const allowed = usePermission('profile.write');
  const [draft, setDraft] = useState<Draft>(empty);
  const [created, setCreated] = useState('');
  const save = useMutation({
    mutationFn: () => {
      const days = draft.max_validity_days.trim();
      if (days && !/^\d+$/.test(days)) throw new Error('max validity must be a whole number of days');
      const pathOf = (b: Block) => (b.path_id.trim() ? { path_id: b.path_id.trim() } : {});
      return api.post('/api/v1/profiles', {
        body: {
          name: draft.name.trim(),
          ...(draft.description.trim() ? { description: draft.description.trim() } : {}),
          ...(days ? { max_validity_days: Number(days) } : {}),
          enrollment: Object.fromEntries(
            DEFAULTS.map(([key]) => [key, draft.enrollment[key] === '' ? null : draft.enrollment[key]]),
          ),
          acme: { enabled: draft.acme.enabled, eab_required: draft.acme.eab_required, ...pathOf(draft.acme) },
          est: { enabled: draft.est.enabled, server_keygen: draft.est.server_keygen, ...pathOf(draft.est) },
          scep: {
            enabled: draft.scep.enabled,
            ...pathOf(draft.scep),
            ...(draft.scep.challenge_password ? { challenge_password: draft.scep.challenge_password } : {}),
          },
        },
      });
    },
    onSuccess: async (profile) => {
      setCreated(profile?.name ?? draft.name);
      // The challenge password leaves the page with the rest of the form.
      setDraft(empty);
      await client.invalidateQueries({ queryKey: ['profiles'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated('');
    save.mutate();
  };
  const pathField = (protocol: 'acme' | 'est' | 'scep') => (
    <Field label={`${protocol.toUpperCase()} path id`} hint="empty: the profile's id addresses it">
      {({ id, describedBy }) => (
        <input
          id={id}
          value={draft[protocol].path_id}
          aria-describedby={describedBy}
          onChange={(e) =>
            setDraft({ ...draft, [protocol]: { ...draft[protocol], path_id: e.target.value } })
          }
        />
      )}
    </Field>
  );
  return (
    <Section title="New profile">
      {created ? (
        <p className="notice" role="status">
          Created {created}.
        </p>
      ) : null}
      {save.isError ? <ErrorBox error={save.error} /> : null}
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit} aria-label="New profile">
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          <Field label="Name">
            {({ id }) => (
              <input
                id={id}
                required
                value={draft.name}
                onChange={(e) => setDraft({ ...draft, name: e.target.value })}
              />
            )}
          </Field>
          <Field label="Max validity (days)" hint="default 397">
            {({ id, describedBy }) => (
              <input
                id={id}
                inputMode="numeric"
                aria-describedby={describedBy}
                value={draft.max_validity_days}
                onChange={(e) => setDraft({ ...draft, max_validity_days: e.target.value })}
              />
            )}
          </Field>
          <Field label="Description">
            {({ id }) => (
              <input
                id={id}
                value={draft.description}
                onChange={(e) => setDraft({ ...draft, description: e.target.value })}
              />
            )}
          </Field>
          <fieldset>
            <legend>Certificates the enrollment protocols create</legend>
            <p className="hint">Required once ACME, EST or SCEP is enabled.</p>
            {DEFAULTS.map(([key, label, resource]) => (
              <Picker
                key={key}
                resource={resource}
                label={label}
                value={draft.enrollment[key]}
                emptyLabel="none"
                onChange={(id) => setDraft({ ...draft, enrollment: { ...draft.enrollment, [key]: id } })}
              />
            ))}
          </fieldset>
          <fieldset>
            <legend>ACME (RFC 8555)</legend>
            <Check
              label="ACME enabled"
              checked={draft.acme.enabled}
              onChange={(v) => setDraft({ ...draft, acme: { ...draft.acme, enabled: v } })}
            />
            {pathField('acme')}
            <Check
              label="External account binding required"
              checked={draft.acme.eab_required}
              onChange={(v) => setDraft({ ...draft, acme: { ...draft.acme, eab_required: v } })}
            />
          </fieldset>
          <fieldset>
            <legend>EST (RFC 7030)</legend>
            <Check
              label="EST enabled"
              checked={draft.est.enabled}
              onChange={(v) => setDraft({ ...draft, est: { ...draft.est, enabled: v } })}
            />
            {pathField('est')}
            <Check
              label="Server-side key generation"
              checked={draft.est.server_keygen}
              onChange={(v) => setDraft({ ...draft, est: { ...draft.est, server_keygen: v } })}
            />
          </fieldset>
          <fieldset>
            <legend>SCEP (RFC 8894)</legend>
            <Check
              label="SCEP enabled"
              checked={draft.scep.enabled}
              onChange={(v) => setDraft({ ...draft, scep: { ...draft.scep, enabled: v } })}
            />
            {pathField('scep')}
            <Field
              label="Challenge password"
              hint="at least 8 characters; stored hashed and never shown again"
            >
              {({ id, describedBy }) => (
                <input
                  id={id}
                  type="password"
                  autoComplete="new-password"
                  aria-describedby={describedBy}
                  value={draft.scep.challenge_password}
                  onChange={(e) =>
                    setDraft({ ...draft, scep: { ...draft.scep, challenge_password: e.target.value } })
                  }
                />
              )}
            </Field>
          </fieldset>
          <ActionButton {...allowed} type="submit" className="button primary" disabled={save.isPending}>
            Create profile
          </ActionButton>
        </fieldset>
      </form>
    </Section>
  );
}

export default function Profiles() {
  return (
    <>
      <ResourceList<Row>
        title="Profiles"
        queryKey={['profiles']}
        load={(page, per_page) => api.get('/api/v1/profiles', { query: { page, per_page } })}
        rowKey={(r) => r.id}
        columns={[
          { key: 'name', header: 'Name', render: (r) => r.name },
          { key: 'validity', header: 'Max validity (days)', render: (r) => r.max_validity_days ?? '—' },
          {
            key: 'keys',
            header: 'Key algorithms',
            render: (r) => r.allowed_key_algorithms?.map((a) => a.algorithm).join(', ') || 'any',
          },
          { key: 'enrollment', header: 'Enrollment', render: (r) => enrollment(r) },
          {
            key: 'scep-secret',
            header: 'SCEP challenge',
            render: (r) => (r.scep?.challenge_password_set ? 'set' : 'none'),
          },
          { key: 'desc', header: 'Description', render: (r) => r.description ?? '—' },
          { key: 'updated', header: 'Updated', render: (r) => <DateTime value={r.updated_at} /> },
        ]}
      />
      <NewProfile />
    </>
  );
}
