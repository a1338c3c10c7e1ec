import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { ActionButton, DateTime, ErrorBox, Notice, Section } from '../components/common';
import { FormField, FormProblem } from '../components/form-field';
import { ResourceList } from '../components/resource-list';
import { TextInput } from '../components/simple-form';
import { errorFor, fieldErrors } from '../form-errors';

type Row = Response200<'/api/v1/auth/oidc/group-mappings'>['data'][number];

const useProviders = () =>
  useQuery({ queryKey: ['oidc-providers', 'all'], queryFn: () => api.get('/api/v1/auth/oidc/providers') });

/** A new mapping: members of a group at a provider get a role when they sign in. */
function NewMapping() {
  const allowed = usePermission('auth.role.assign');
  const client = useQueryClient();
  const providers = useProviders();
  const roles = useQuery({ queryKey: ['auth-roles'], queryFn: () => api.get('/api/v1/auth/roles') });
  const [d, setD] = useState({ provider_id: '', group: '', role: 'viewer' });
  const [notice, setNotice] = useState('');
  const create = useMutation({
    mutationFn: () =>
      api.post('/api/v1/auth/oidc/group-mappings', {
        body: { provider_id: d.provider_id, group: d.group.trim(), role: d.role },
      }),
    onSuccess: async (m) => {
      setNotice(`Members of ${m.group} get ${m.role} at their next sign-in.`);
      setD({ ...d, group: '' });
      await client.invalidateQueries({ queryKey: ['group-mappings'] });
    },
  });
  const errors = fieldErrors(create.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setNotice('');
    create.mutate();
  };
  const select = (
    key: 'provider_id' | 'role',
    label: string,
    options: { value: string; label: string }[],
    hint?: string,
  ) => (
    <FormField label={label} hint={hint} error={errorFor(errors, key)}>
      {({ id, describedBy, invalid }) => (
        <select
          id={id}
          value={d[key]}
          required
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onChange={(e) => setD({ ...d, [key]: e.target.value })}
        >
          {key === 'provider_id' ? <option value="">Choose a provider</option> : null}
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </FormField>
  );
  return (
    <Section title="New group mapping">
      <Notice message={notice} />
      <FormProblem error={create.error} shown={['provider_id', 'group', 'role']} />
      {providers.isError ? <ErrorBox error={providers.error} /> : null}
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit} aria-label="New group mapping">
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          {select(
            'provider_id',
            'Provider',
            (providers.data?.data ?? []).map((p) => ({ value: p.id, label: p.name })),
          )}
          <TextInput
            draft={d}
            setDraft={setD}
            errors={errors}
            name="group"
            label="Group"
            hint="a value of the provider's groups claim"
            required
          />
          {select(
            'role',
            'Role',
            (roles.data?.data ?? []).map((r) => ({ value: r.name, label: `${r.name} — ${r.description}` })),
          )}
          <ActionButton {...allowed} type="submit" className="button primary" disabled={create.isPending}>
            Add mapping
          </ActionButton>
        </fieldset>
      </form>
    </Section>
  );
}

export default function GroupMappings() {
  const remove = usePermission('auth.role.assign');
  const client = useQueryClient();
  const providers = useProviders();
  const [notice, setNotice] = useState('');
  const del = useMutation({
    mutationFn: (m: Row) => api.delete('/api/v1/auth/oidc/group-mappings/{id}', { params: { id: m.id } }),
    onSuccess: async (_, m) => {
      setNotice(`Removed the mapping of ${m.group} to ${m.role}.`);
      await client.invalidateQueries({ queryKey: ['group-mappings'] });
    },
  });
  const providerName = (id: string | null) =>
    id === null ? 'any' : (providers.data?.data.find((p) => p.id === id)?.name ?? id);
  return (
    <>
      <Notice message={notice} />
      {del.isError ? <ErrorBox error={del.error} /> : null}
      <ResourceList<Row>
        title="OIDC group mappings"
        intro="Which role the members of an identity provider's group get when they sign in."
        queryKey={['group-mappings']}
        load={() => api.get('/api/v1/auth/oidc/group-mappings')}
        rowKey={(r) => r.id}
        empty="No group mapping yet: add one below."
        columns={[
          { key: 'group', header: 'Group', render: (r) => r.group },
          { key: 'role', header: 'Role', render: (r) => r.role },
          { key: 'provider', header: 'Provider', render: (r) => providerName(r.provider_id) },
          { key: 'created', header: 'Created', render: (r) => <DateTime value={r.created_at} /> },
          {
            key: 'actions',
            header: 'Actions',
            render: (r) => (
              <ActionButton
                {...remove}
                aria-label={`Remove mapping ${r.group} to ${r.role}`}
                disabled={del.isPending}
                onClick={() => del.mutate(r)}
              >
                Remove
              </ActionButton>
            ),
          },
        ]}
      />
      <NewMapping />
    </>
  );
}
