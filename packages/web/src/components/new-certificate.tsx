import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import { ActionButton, ErrorBox, Field, Section } from './common';
import { Picker, type PickerResource } from './picker';

interface Draft {
  name: string;
  common_name: string;
  sans: string;
  issuer_id: string;
  owner_id: string;
  team_id: string;
  renewal_policy_id: string;
  profile_id: string;
  environment: string;
}

const empty: Draft = {
  name: '',
  common_name: '',
  sans: '',
  issuer_id: '',
  owner_id: '',
  team_id: '',
  renewal_policy_id: '',
  profile_id: '',
  environment: '',
};

const REQUIRED = [
  ['issuer_id', 'issuer'],
  ['owner_id', 'owner'],
  ['team_id', 'team'],
  ['renewal_policy_id', 'renewal policy'],
] as const;

/**
 * "New certificate": names, owner, team, issuer, renewal policy and profile chosen from what
 * exists. The certificate is created Pending; its page issues it.
 */
export function NewCertificate() {
  const allowed = usePermission('cert.write');
  const client = useQueryClient();
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState<Draft>(empty);
  const create = useMutation({
    mutationFn: () => {
      const missing = REQUIRED.filter(([key]) => draft[key] === '').map(([, label]) => label);
      if (missing.length > 0) throw new Error(`choose ${missing.join(', ')}`);
      return api.post('/api/v1/certificates', {
        body: {
          name: draft.name.trim(),
          common_name: draft.common_name.trim(),
          issuer_id: draft.issuer_id,
          owner_id: draft.owner_id,
          team_id: draft.team_id,
          renewal_policy_id: draft.renewal_policy_id,
          sans: draft.sans
            .split(/[\s,]+/)
            .map((s) => s.trim())
            .filter((s) => s !== ''),
          ...(draft.profile_id ? { profile_id: draft.profile_id } : {}),
          ...(draft.environment.trim() ? { environment: draft.environment.trim() } : {}),
        },
      });
    },
    onSuccess: async (created) => {
      await client.invalidateQueries({ queryKey: ['certificates'] });
      if (created) await navigate({ to: '/certificates/$id', params: { id: created.id } });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const text = (
    key: 'name' | 'common_name' | 'sans' | 'environment',
    label: string,
    hint?: string,
    required?: boolean,
  ) => (
    <Field label={label} {...(hint ? { hint } : {})}>
      {({ id, describedBy }) => (
        <input
          id={id}
          value={draft[key]}
          required={required}
          aria-describedby={describedBy}
          onChange={(e) => setDraft({ ...draft, [key]: e.target.value })}
        />
      )}
    </Field>
  );
  const pick = (
    key: (typeof REQUIRED)[number][0] | 'profile_id',
    resource: PickerResource,
    label: string,
  ) => (
    <Picker
      resource={resource}
      label={label}
      value={draft[key]}
      onChange={(id) => setDraft({ ...draft, [key]: id })}
      {...(key === 'profile_id' ? { emptyLabel: 'none' } : {})}
    />
  );
  if (!open)
    return (
      <p>
        <ActionButton {...allowed} className="button primary" onClick={() => setOpen(true)}>
          New certificate
        </ActionButton>
      </p>
    );
  return (
    <Section title="New certificate">
      {create.isError ? <ErrorBox error={create.error} /> : null}
      <form className="form" onSubmit={submit} aria-label="New certificate">
        {text('name', 'Name', undefined, true)}
        {text('common_name', 'Common name', undefined, true)}
        {text('sans', 'Subject alternative names', 'DNS names or addresses, comma-separated')}
        {pick('issuer_id', 'issuers', 'Issuer')}
        {pick('owner_id', 'owners', 'Owner')}
        {pick('team_id', 'teams', 'Team')}
        {pick('renewal_policy_id', 'renewal-policies', 'Renewal policy')}
        {pick('profile_id', 'profiles', 'Profile')}
        {text('environment', 'Environment', 'for example production')}
        <button type="submit" className="button primary" disabled={create.isPending}>
          Create certificate
        </button>{' '}
        <button type="button" className="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </form>
    </Section>
  );
}
