import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Response200 } from '../api';
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
import { FormField, FormProblem } from '../components/form-field';
import { ResourceList } from '../components/resource-list';
import { errorFor, fieldErrors } from '../form-errors';

type Row = Response200<'/api/v1/auth/users'>['data'][number];
type Role = Response200<'/api/v1/auth/roles'>['data'][number];

const useRoles = () =>
  useQuery({ queryKey: ['auth-roles'], queryFn: () => api.get('/api/v1/auth/roles'), staleTime: 30_000 });
const useProviders = (enabled: boolean) =>
  useQuery({
    queryKey: ['oidc-providers', 'all'],
    enabled,
    queryFn: () => api.get('/api/v1/auth/oidc/providers'),
    staleTime: 30_000,
  });

/** Role checkboxes, each with what the role is for. */
function RoleChoice({
  roles,
  value,
  onChange,
  error,
}: {
  roles: readonly Role[];
  value: readonly string[];
  onChange: (roles: string[]) => void;
  error?: string | undefined;
}) {
  return (
    <fieldset aria-invalid={Boolean(error)}>
      <legend>Roles</legend>
      <div className="plain-fieldset">
        {roles.map((r) => (
          <label key={r.name} className="check">
            <input
              type="checkbox"
              checked={value.includes(r.name)}
              onChange={(e) =>
                onChange(e.target.checked ? [...value, r.name] : value.filter((name) => name !== r.name))
              }
            />{' '}
            <span>
              <strong>{r.name}</strong> <span className="muted">— {r.description}</span>
            </span>
          </label>
        ))}
      </div>
      {error ? <span className="field-error">{error}</span> : null}
    </fieldset>
  );
}

const nameOf = (u: Row) => u.display_name ?? u.email ?? u.subject;

/** A user's directly assigned roles, changed in a dialog (group-mapped roles come from the sign-in). */
function RolesDialog({ user, onClose }: { user: Row | null; onClose: (message: string) => void }) {
  const client = useQueryClient();
  const roles = useRoles();
  const [chosen, setChosen] = useState<string[] | null>(null);
  const current = useQuery({
    queryKey: ['auth-user-roles', user?.id],
    enabled: user !== null,
    queryFn: () => api.get('/api/v1/auth/users/{id}/roles', { params: { id: user?.id ?? '' } }),
  });
  const value = chosen ?? current.data?.roles ?? [];
  const save = useMutation({
    mutationFn: () =>
      api.put('/api/v1/auth/users/{id}/roles', { params: { id: user?.id ?? '' }, body: { roles: value } }),
    onSuccess: async (saved) => {
      await client.invalidateQueries({ queryKey: ['auth-user-roles', user?.id] });
      onClose(
        `${user ? nameOf(user) : 'The user'} now has ${saved.roles.length ? saved.roles.join(', ') : 'no role'}.`,
      );
    },
  });
  return (
    <ConfirmDialog
      open={user !== null}
      title={`Roles of ${user ? nameOf(user) : ''}`}
      confirmLabel="Save roles"
      busy={save.isPending || current.isPending}
      onConfirm={() => save.mutate()}
      onCancel={() => onClose('')}
    >
      <p>
        Roles given here apply from the user’s next request. Roles their OIDC groups map to are added at
        sign-in.
      </p>
      <FormProblem error={save.error} shown={['roles']} />
      {current.isPending || roles.isPending ? <Loading what="Loading roles" /> : null}
      {roles.data && current.data ? (
        <RoleChoice
          roles={roles.data.data}
          value={value}
          onChange={setChosen}
          error={errorFor(fieldErrors(save.error), 'roles')}
        />
      ) : null}
    </ConfirmDialog>
  );
}

interface Draft {
  provider_id: string;
  subject: string;
  email: string;
  display_name: string;
  roles: string[];
}
const EMPTY: Draft = { provider_id: '', subject: '', email: '', display_name: '', roles: [] };

/** A user made before their first sign-in: an OIDC user with their provider's `sub`, or a local one. */
function NewUser() {
  const allowed = usePermission('auth.role.assign');
  const canListProviders = usePermission('auth.oidc.list');
  const client = useQueryClient();
  const roles = useRoles();
  const providers = useProviders(canListProviders.allowed);
  const [d, setD] = useState<Draft>(EMPTY);
  const [notice, setNotice] = useState('');
  const create = useMutation({
    mutationFn: () =>
      api.post('/api/v1/auth/users', {
        body: {
          subject: d.subject.trim(),
          ...(d.provider_id ? { provider_id: d.provider_id } : {}),
          ...(d.email.trim() ? { email: d.email.trim() } : {}),
          ...(d.display_name.trim() ? { display_name: d.display_name.trim() } : {}),
          roles: d.roles,
        },
      }),
    onSuccess: async (user) => {
      setNotice(`Created ${user.display_name ?? user.subject}.`);
      setD(EMPTY);
      await client.invalidateQueries({ queryKey: ['users'] });
    },
  });
  const errors = fieldErrors(create.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setNotice('');
    create.mutate();
  };
  const text = (
    key: 'subject' | 'email' | 'display_name',
    label: string,
    hint?: string,
    required?: boolean,
  ) => (
    <FormField label={label} hint={hint} error={errorFor(errors, key)}>
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          value={d[key]}
          type={key === 'email' ? 'email' : 'text'}
          required={required}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onChange={(e) => setD({ ...d, [key]: e.target.value })}
        />
      )}
    </FormField>
  );
  return (
    <Section title="New user">
      <Notice message={notice} />
      <FormProblem
        error={create.error}
        shown={['subject', 'email', 'display_name', 'provider_id', 'roles']}
      />
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit} aria-label="New user">
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          <FormField
            label="Signs in with"
            hint="an OIDC provider (the user gets these roles at their first sign-in), or local (break-glass)"
            error={errorFor(errors, 'provider_id')}
          >
            {({ id, describedBy, invalid }) => (
              <select
                id={id}
                value={d.provider_id}
                aria-describedby={describedBy}
                aria-invalid={invalid}
                onChange={(e) => setD({ ...d, provider_id: e.target.value })}
              >
                <option value="">Local user</option>
                {(providers.data?.data ?? []).map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            )}
          </FormField>
          {text('subject', 'Subject', "the provider's `sub` claim, or the local actor id", true)}
          {text('display_name', 'Display name')}
          {text('email', 'E-mail')}
          {roles.data ? (
            <RoleChoice
              roles={roles.data.data}
              value={d.roles}
              onChange={(chosen) => setD({ ...d, roles: chosen })}
              error={errorFor(errors, 'roles')}
            />
          ) : null}
          <ActionButton {...allowed} type="submit" className="button primary" disabled={create.isPending}>
            Create user
          </ActionButton>
        </fieldset>
      </form>
    </Section>
  );
}

export default function Users() {
  const assign = usePermission('auth.role.assign');
  const canListProviders = usePermission('auth.oidc.list');
  const providers = useProviders(canListProviders.allowed);
  const [editing, setEditing] = useState<Row | null>(null);
  const [notice, setNotice] = useState('');
  const providerName = (id: string | null) =>
    id === null ? 'local' : (providers.data?.data.find((p) => p.id === id)?.name ?? id);
  return (
    <>
      {providers.isError ? <ErrorBox error={providers.error} /> : null}
      <Notice message={notice} />
      <ResourceList<Row>
        title="Users"
        intro="People who sign in, and the roles given to them directly."
        queryKey={['users']}
        load={(page, per_page) => api.get('/api/v1/auth/users', { query: { page, per_page } })}
        rowKey={(r) => r.id}
        empty="No users yet: they appear at their first sign-in, or create one below."
        columns={[
          { key: 'name', header: 'Name', render: (r) => nameOf(r) },
          { key: 'email', header: 'Email', render: (r) => r.email ?? '—' },
          { key: 'provider', header: 'Signs in with', render: (r) => providerName(r.provider_id) },
          { key: 'login', header: 'Last sign-in', render: (r) => <DateTime value={r.last_login_at} /> },
          { key: 'state', header: 'State', render: (r) => (r.deactivated_at ? 'deactivated' : 'active') },
          {
            key: 'roles',
            header: 'Roles',
            render: (r) => (
              <ActionButton
                {...assign}
                className="button small"
                aria-label={`Roles of ${nameOf(r)}`}
                onClick={() => setEditing(r)}
              >
                Roles
              </ActionButton>
            ),
          },
        ]}
      />
      <RolesDialog
        key={editing?.id ?? 'none'}
        user={editing}
        onClose={(message) => {
          setEditing(null);
          if (message) setNotice(message);
        }}
      />
      <NewUser />
    </>
  );
}
