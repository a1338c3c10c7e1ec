import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Response200 } from '../api';
import { usePermission } from '../auth';
import { ActionButton, ConfirmDialog, DateTime, ErrorBox, Notice, Section } from '../components/common';
import { Copyable } from '../components/copyable';
import { FormProblem } from '../components/form-field';
import { Picker } from '../components/picker';
import { ResourceList } from '../components/resource-list';
import { TextInput } from '../components/simple-form';
import { errorFor, fieldErrors } from '../form-errors';
import { Named } from '../names';

type Row = Response200<'/api/v1/acme/eab-keys'>['data'][number];

interface Created {
  id: string;
  name: string;
  hmac_key: string;
  /** The profile's ACME base path segment: its acme.path_id, else its id (docs/protocols/acme.md). */
  path: string;
}

/**
 * A new external account binding key for a profile's ACME directory. The HMAC key is in the
 * create answer only: it is shown once here, with the certbot line that uses it.
 */
function NewEabKey() {
  const allowed = usePermission('acme.eab.write');
  const client = useQueryClient();
  const [d, setD] = useState({ name: '', profile_id: '' });
  const [created, setCreated] = useState<Created | null>(null);
  const create = useMutation({
    mutationFn: async () => {
      const key = await api.post('/api/v1/acme/eab-keys', {
        body: { name: d.name.trim(), profile_id: d.profile_id },
      });
      const profile = await api
        .get('/api/v1/profiles/{id}', { params: { id: key.profile_id } })
        .catch(() => null);
      return { key, path: profile?.acme?.path_id ?? key.profile_id };
    },
    onSuccess: async ({ key, path }) => {
      setCreated({ id: key.id, name: key.name, hmac_key: key.hmac_key, path });
      setD({ name: '', profile_id: d.profile_id });
      await client.invalidateQueries({ queryKey: ['acme-eab'] });
    },
  });
  const errors = fieldErrors(create.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated(null);
    create.mutate();
  };
  const certbot = created
    ? `certbot certonly --server ${window.location.origin}/acme/profile/${created.path}/directory --eab-kid ${created.id} --eab-hmac-key ${created.hmac_key} -d <name>`
    : '';
  return (
    <Section title="New EAB key">
      {created ? (
        <div className="notice" role="status">
          <p>
            Created <strong>{created.name}</strong>. Its HMAC key is shown this once and cannot be read again.
          </p>
          <dl className="kv">
            <dt>Key id (--eab-kid)</dt>
            <dd>
              <Copyable value={created.id} label="EAB key id" />
            </dd>
            <dt>HMAC key (--eab-hmac-key)</dt>
            <dd>
              <Copyable value={created.hmac_key} label="EAB HMAC key" />
            </dd>
            <dt>certbot</dt>
            <dd>
              <Copyable value={certbot} label="certbot command" />
            </dd>
          </dl>
          <button type="button" className="button" onClick={() => setCreated(null)}>
            I have stored the key
          </button>
        </div>
      ) : null}
      <FormProblem error={create.error} shown={['name', 'profile_id']} />
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit} aria-label="New EAB key">
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          <TextInput
            draft={d}
            setDraft={setD}
            errors={errors}
            name="name"
            label="Name"
            hint="who or what it is for"
            required
          />
          <Picker
            resource="profiles"
            label="Profile"
            hint="the ACME directory (profile) accounts made with it may use"
            value={d.profile_id}
            onChange={(profile_id) => setD({ ...d, profile_id })}
          />
          {errorFor(errors, 'profile_id') ? (
            <span className="field-error">{errorFor(errors, 'profile_id')}</span>
          ) : null}
          <ActionButton {...allowed} type="submit" className="button primary" disabled={create.isPending}>
            Create EAB key
          </ActionButton>
        </fieldset>
      </form>
    </Section>
  );
}

export default function AcmeEabKeys() {
  const write = usePermission('acme.eab.write');
  const client = useQueryClient();
  const [deleting, setDeleting] = useState<Row | null>(null);
  const [notice, setNotice] = useState('');
  const del = useMutation({
    mutationFn: (k: Row) => api.delete('/api/v1/acme/eab-keys/{id}', { params: { id: k.id } }),
    onSuccess: async (_, k) => {
      setDeleting(null);
      setNotice(`Deleted ${k.name}.`);
      await client.invalidateQueries({ queryKey: ['acme-eab'] });
    },
  });
  return (
    <>
      <Notice message={notice} />
      <ResourceList<Row>
        title="ACME EAB keys"
        intro="External account binding keys (RFC 8555 §7.3.4): an ACME client needs one to open an account on a profile that requires it."
        queryKey={['acme-eab']}
        load={(page, per_page) => api.get('/api/v1/acme/eab-keys', { query: { page, per_page } })}
        rowKey={(r) => r.id}
        refs={(r) => [['profile', r.profile_id]]}
        empty="No EAB key yet: create one below and hand its id and HMAC key to the ACME client."
        columns={(names) => [
          { key: 'name', header: 'Name', render: (r) => r.name },
          { key: 'id', header: 'Key id', render: (r) => <code>{r.id}</code> },
          {
            key: 'profile',
            header: 'Profile',
            render: (r) => <Named names={names} kind="profile" id={r.profile_id} />,
          },
          { key: 'account', header: 'Bound account', render: (r) => r.account_id ?? 'unbound' },
          { key: 'bound', header: 'Bound at', render: (r) => <DateTime value={r.bound_at} /> },
          { key: 'created', header: 'Created', render: (r) => <DateTime value={r.created_at} /> },
          {
            key: 'actions',
            header: 'Actions',
            render: (r) => (
              <ActionButton {...write} aria-label={`Delete ${r.name}`} onClick={() => setDeleting(r)}>
                Delete
              </ActionButton>
            ),
          },
        ]}
      />
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete EAB key ${deleting?.name ?? ''}?`}
        confirmLabel={`Delete ${deleting?.name ?? ''}`}
        danger
        busy={del.isPending}
        onCancel={() => setDeleting(null)}
        onConfirm={() => deleting && del.mutate(deleting)}
      >
        <p>No new account can be opened with it. An account it already bound stays.</p>
        {del.isError ? <ErrorBox error={del.error} /> : null}
      </ConfirmDialog>
      <NewEabKey />
    </>
  );
}
