import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { ActionButton, ConfirmDialog, DateTime, ErrorBox, Notice, Section } from '../components/common';
import { FormProblem } from '../components/form-field';
import { ResourceList } from '../components/resource-list';
import { TextInput } from '../components/simple-form';
import { fieldErrors } from '../form-errors';
import { listOf } from '../format';

type Row = Response200<'/api/v1/auth/oidc/providers'>['data'][number];

interface Draft {
  name: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  scopes: string;
  groups_claim: string;
  email_claim: string;
  name_claim: string;
  redirect_uri: string;
  post_login_url: string;
  enabled: boolean;
}

const empty = (): Draft => ({
  name: '',
  issuer: '',
  client_id: '',
  client_secret: '',
  scopes: 'openid email profile',
  groups_claim: 'groups',
  email_claim: 'email',
  name_claim: 'name',
  redirect_uri: `${window.location.origin}/auth/oidc/callback`,
  post_login_url: '/',
  enabled: true,
});

const SHOWN = [
  'name',
  'issuer',
  'client_id',
  'client_secret',
  'scopes',
  'groups_claim',
  'email_claim',
  'name_claim',
  'redirect_uri',
  'post_login_url',
];

/** A new OIDC provider: the client secret is write-only (never shown again once saved). */
function NewProvider() {
  const allowed = usePermission('auth.oidc.create');
  const client = useQueryClient();
  const [d, setD] = useState<Draft>(empty);
  const [notice, setNotice] = useState('');
  const create = useMutation({
    mutationFn: () =>
      api.post('/api/v1/auth/oidc/providers', {
        body: {
          name: d.name.trim(),
          issuer: d.issuer.trim(),
          client_id: d.client_id.trim(),
          ...(d.client_secret ? { client_secret: d.client_secret } : {}),
          scopes: listOf(d.scopes),
          groups_claim: d.groups_claim.trim(),
          email_claim: d.email_claim.trim(),
          name_claim: d.name_claim.trim(),
          redirect_uri: d.redirect_uri.trim(),
          post_login_url: d.post_login_url.trim(),
          enabled: d.enabled,
        },
      }),
    onSuccess: async (p) => {
      setNotice(
        `Added ${p.name}. Its sign-in button shows on the sign-in page${p.enabled ? '' : ' once enabled'}.`,
      );
      setD(empty());
      await client.invalidateQueries({ queryKey: ['oidc-providers'] });
    },
  });
  const errors = fieldErrors(create.error);
  const props = { draft: d, setDraft: setD, errors };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setNotice('');
    create.mutate();
  };
  return (
    <Section title="New OIDC provider">
      <Notice message={notice} />
      <FormProblem error={create.error} shown={SHOWN} />
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit} aria-label="New OIDC provider">
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          <TextInput {...props} name="name" label="Name" hint="shown on the sign-in button" required />
          <TextInput
            {...props}
            name="issuer"
            label="Issuer URL"
            hint="https://…; discovery is read from it"
            required
          />
          <TextInput {...props} name="client_id" label="Client id" required />
          <TextInput
            {...props}
            name="client_secret"
            label="Client secret"
            type="password"
            hint="write-only"
          />
          <TextInput
            {...props}
            name="scopes"
            label="Scopes"
            hint="space- or comma-separated; must include openid"
          />
          <TextInput {...props} name="groups_claim" label="Groups claim" />
          <TextInput {...props} name="email_claim" label="E-mail claim" />
          <TextInput {...props} name="name_claim" label="Name claim" />
          <TextInput
            {...props}
            name="redirect_uri"
            label="Redirect URI"
            hint="register this at the provider: …/auth/oidc/callback"
          />
          <TextInput
            {...props}
            name="post_login_url"
            label="After sign-in"
            hint="a path (/…) or an https URL"
          />
          <label className="check">
            <input
              type="checkbox"
              checked={d.enabled}
              onChange={(e) => setD({ ...d, enabled: e.target.checked })}
            />{' '}
            Enabled
          </label>
          <ActionButton {...allowed} type="submit" className="button primary" disabled={create.isPending}>
            Add provider
          </ActionButton>
        </fieldset>
      </form>
    </Section>
  );
}

export default function OidcProviders() {
  const remove = usePermission('auth.oidc.delete');
  const client = useQueryClient();
  const [deleting, setDeleting] = useState<Row | null>(null);
  const [notice, setNotice] = useState('');
  const del = useMutation({
    mutationFn: (p: Row) => api.delete('/api/v1/auth/oidc/providers/{id}', { params: { id: p.id } }),
    onSuccess: async (_, p) => {
      setDeleting(null);
      setNotice(`Removed ${p.name}.`);
      await client.invalidateQueries({ queryKey: ['oidc-providers'] });
    },
  });
  return (
    <>
      <Notice message={notice} />
      <ResourceList<Row>
        title="OIDC providers"
        intro="Identity providers people sign in with (OpenID Connect)."
        queryKey={['oidc-providers']}
        load={() => api.get('/api/v1/auth/oidc/providers')}
        rowKey={(r) => r.id}
        empty="No OIDC provider yet: add one below to offer single sign-on."
        columns={[
          { key: 'name', header: 'Name', render: (r) => r.name },
          { key: 'issuer', header: 'Issuer', render: (r) => <code>{r.issuer}</code> },
          { key: 'client', header: 'Client id', render: (r) => r.client_id },
          {
            key: 'secret',
            header: 'Client secret',
            render: (r) => (r.client_secret_set ? 'set (write-only)' : 'none'),
          },
          { key: 'enabled', header: 'Enabled', render: (r) => (r.enabled ? 'yes' : 'no') },
          { key: 'updated', header: 'Updated', render: (r) => <DateTime value={r.updated_at} /> },
          {
            key: 'actions',
            header: 'Actions',
            render: (r) => (
              <ActionButton {...remove} aria-label={`Remove ${r.name}`} onClick={() => setDeleting(r)}>
                Remove
              </ActionButton>
            ),
          },
        ]}
      />
      <ConfirmDialog
        open={deleting !== null}
        title={`Remove ${deleting?.name ?? ''}?`}
        confirmLabel={`Remove ${deleting?.name ?? ''}`}
        danger
        busy={del.isPending}
        onCancel={() => setDeleting(null)}
        onConfirm={() => deleting && del.mutate(deleting)}
      >
        <p>Nobody can sign in through it any more. Its group mappings stop applying.</p>
        {del.isError ? <ErrorBox error={del.error} /> : null}
      </ConfirmDialog>
      <NewProvider />
    </>
  );
}
