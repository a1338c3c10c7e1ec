import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import { ActionButton, ErrorBox, Field, Section } from './common';

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
  const choices = useQuery({
    queryKey: ['certificate-form-choices'],
    enabled: open,
    queryFn: async () => {
      const q = { query: { page: 1, per_page: 100 } };
      const [issuers, owners, teams, policies, profiles] = await Promise.all([
        api.get('/api/v1/issuers', q),
        api.get('/api/v1/owners', q),
        api.get('/api/v1/teams', q),
        api.get('/api/v1/renewal-policies', q),
        api.get('/api/v1/profiles', q),
      ]);
      return {
        issuer_id: issuers.data,
        owner_id: owners.data,
        team_id: teams.data,
        renewal_policy_id: policies.data,
        profile_id: profiles.data,
      };
    },
  });
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
  const select = (
    key: 'issuer_id' | 'owner_id' | 'team_id' | 'renewal_policy_id' | 'profile_id',
    label: string,
    optional?: boolean,
  ) => (
    <Field label={label}>
      {({ id }) => (
        <select id={id} value={draft[key]} onChange={(e) => setDraft({ ...draft, [key]: e.target.value })}>
          <option value="">{optional ? 'none' : '— choose —'}</option>
          {choices.data?.[key].map((row) => (
            <option key={row.id} value={row.id}>
              {row.name}
            </option>
          ))}
        </select>
      )}
    </Field>
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
      {choices.isError ? <ErrorBox error={choices.error} /> : null}
      {create.isError ? <ErrorBox error={create.error} /> : null}
      <form className="form" onSubmit={submit} aria-label="New certificate">
        {text('name', 'Name', undefined, true)}
        {text('common_name', 'Common name', undefined, true)}
        {text('sans', 'Subject alternative names', 'DNS names or addresses, comma-separated')}
        {select('issuer_id', 'Issuer')}
        {select('owner_id', 'Owner')}
        {select('team_id', 'Team')}
        {select('renewal_policy_id', 'Renewal policy')}
        {select('profile_id', 'Profile', true)}
        {text('environment', 'Environment', 'for example production')}
        <button type="submit" className="button primary" disabled={create.isPending || choices.isPending}>
          Create certificate
        </button>{' '}
        <button type="button" className="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </form>
    </Section>
  );
}
