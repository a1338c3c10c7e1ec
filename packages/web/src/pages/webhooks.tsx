import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, type Paths, type Response200 } from '../api';
import { usePermission } from '../auth';
import {
  ActionButton,
  ConfirmDialog,
  DateTime,
  ErrorBox,
  Field,
  Loading,
  Section,
} from '../components/common';
import { FormField } from '../components/form-field';
import { DataTable } from '../components/table';
import { errorFor, fieldErrors } from '../form-errors';
import { previewTemplate, TEMPLATE_VARIABLES } from '../template-preview';

type CreateBody = Paths['/api/notifications/webhooks']['post']['requestBody']['content']['application/json'];
type Kind = NonNullable<CreateBody['service']>;
type EventType = NonNullable<CreateBody['events']>[number];
type Webhook = Response200<'/api/notifications/webhooks'>['data'][number];
type TestResult = Response200<'/api/notifications/webhooks/test', 'post'>;

const KINDS: { value: Kind; label: string }[] = [
  { value: 'generic', label: 'Generic HTTP (JSON)' },
  { value: 'slack', label: 'Slack' },
  { value: 'discord', label: 'Discord' },
  { value: 'teams', label: 'Microsoft Teams' },
  { value: 'telegram', label: 'Telegram bot' },
  { value: 'gotify', label: 'Gotify' },
  { value: 'ntfy', label: 'ntfy' },
  { value: 'pagerduty', label: 'PagerDuty events' },
];
const EVENTS: EventType[] = [
  'ExpirationWarning',
  'RenewalSuccess',
  'RenewalFailure',
  'DeploymentSuccess',
  'DeploymentFailure',
  'PolicyViolation',
  'Revocation',
  'EndpointHealth',
];

interface HeaderRow {
  key: number;
  name: string;
  value: string;
}

/** Alerts → Notifications: webhooks with a kind picker, template editor, preview and test. */
export default function Webhooks() {
  const client = useQueryClient();
  const write = usePermission('webhook.write');
  const hooks = useQuery({
    queryKey: ['webhooks'],
    queryFn: () => api.get('/api/notifications/webhooks', { query: { per_page: 100 } }),
  });
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [kind, setKind] = useState<Kind>('generic');
  const [events, setEvents] = useState<EventType[]>([]);
  const [template, setTemplate] = useState('');
  const [headers, setHeaders] = useState<HeaderRow[]>([]);
  const [nextKey, setNextKey] = useState(1);
  const [created, setCreated] = useState<string | null>(null);
  const [testResult, setTestResult] = useState<{ hook: string; result: TestResult } | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [editing, setEditing] = useState<Webhook | null>(null);

  const body = (): CreateBody => ({
    name: name.trim(),
    url: url.trim(),
    service: kind,
    events,
    template,
    headers: headers
      .filter((h) => h.name.trim() !== '')
      .map((h) => ({ name: h.name.trim(), value: h.value })),
  });
  const reset = () => {
    setEditing(null);
    setHeaders([]);
    setName('');
    setUrl('');
    setKind('generic');
    setTemplate('');
    setEvents([]);
  };
  /** Editing starts from the stored webhook; header values arrive masked and stay masked. */
  const startEdit = (hook: Webhook) => {
    setCreated(null);
    setEditing(hook);
    setName(hook.name);
    setUrl(hook.url);
    setKind(hook.service as Kind);
    setEvents(hook.events as EventType[]);
    setTemplate(hook.template ?? '');
    setHeaders(hook.headers.map((h, i) => ({ key: nextKey + i, name: h.name, value: h.value })));
    setNextKey(nextKey + hook.headers.length);
  };
  const create = useMutation({
    // A header whose value is still the mask keeps its stored value on the server.
    mutationFn: () =>
      editing
        ? api.put('/api/notifications/webhooks/{id}', { params: { id: editing.id }, body: body() })
        : api.post('/api/notifications/webhooks', { body: body() }),
    onSuccess: async (hook) => {
      setCreated(editing ? `${hook.name} saved` : `${hook.name} created`);
      setEditing(null);
      setKind('generic');
      // Secrets typed into the form are gone once saved; the list shows them masked.
      setHeaders([]);
      setName('');
      setUrl('');
      setTemplate('');
      setEvents([]);
      await client.invalidateQueries({ queryKey: ['webhooks'] });
    },
  });
  const errors = fieldErrors(create.error);
  const test = useMutation({
    mutationFn: async (hook: Webhook) => ({
      hook: hook.name,
      result: await api.post('/api/notifications/webhooks/test', { body: { id: hook.id } }),
    }),
    onSuccess: (outcome) => setTestResult(outcome),
  });
  const remove = useMutation({
    mutationFn: (hook: Webhook) =>
      api.delete('/api/notifications/webhooks/{id}', { params: { id: hook.id } }),
    onSuccess: async () => {
      setDeleting(null);
      await client.invalidateQueries({ queryKey: ['webhooks'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setCreated(null);
    create.mutate();
  };
  const preview = previewTemplate(template);

  return (
    <>
      <h1>Alerts → Notifications</h1>
      <Section title="Webhooks">
        {hooks.isPending ? <Loading what="Loading webhooks" /> : null}
        {hooks.isError ? <ErrorBox error={hooks.error} /> : null}
        {test.isError ? <ErrorBox error={test.error} /> : null}
        {testResult ? (
          <div className={testResult.result.delivered ? 'notice' : 'error'} role="status">
            <strong>
              Test of {testResult.hook}: {testResult.result.delivered ? 'delivered' : 'not delivered'}
            </strong>
            <p>
              Status {testResult.result.status_code ?? '—'} in {testResult.result.duration_ms} ms
              {testResult.result.meaning ? ` — ${testResult.result.meaning}` : ''}
              {testResult.result.error ? ` — ${testResult.result.error}` : ''}
            </p>
            {testResult.result.response_excerpt ? (
              <pre className="code">{testResult.result.response_excerpt}</pre>
            ) : null}
          </div>
        ) : null}
        {hooks.data ? (
          <DataTable
            caption="Webhooks"
            rows={hooks.data.data}
            rowKey={(h) => h.id}
            empty="No webhooks yet."
            columns={[
              { key: 'name', header: 'Name', render: (h) => h.name },
              { key: 'kind', header: 'Kind', render: (h) => h.service },
              { key: 'url', header: 'URL', render: (h) => <code>{h.url}</code> },
              {
                key: 'events',
                header: 'Events',
                render: (h) => (h.events.length ? h.events.join(', ') : 'all'),
              },
              {
                key: 'headers',
                header: 'Headers',
                render: (h) => h.headers.map((x) => `${x.name}: ${x.value}`).join(', ') || '—',
              },
              { key: 'updated', header: 'Updated', render: (h) => <DateTime value={h.updated_at} /> },
              {
                key: 'actions',
                header: 'Actions',
                render: (h) => (
                  <div className="actions">
                    <ActionButton
                      {...write}
                      onClick={() => test.mutate(h)}
                      disabled={test.isPending}
                      aria-label={`Test ${h.name}`}
                    >
                      Test
                    </ActionButton>
                    <ActionButton {...write} onClick={() => startEdit(h)} aria-label={`Edit ${h.name}`}>
                      Edit
                    </ActionButton>
                    <ActionButton
                      {...write}
                      className="button danger"
                      onClick={() => setDeleting(h)}
                      aria-label={`Delete ${h.name}`}
                    >
                      Delete
                    </ActionButton>
                  </div>
                ),
              },
            ]}
          />
        ) : null}
      </Section>
      <ConfirmDialog
        open={deleting !== null}
        title={`Delete webhook ${deleting?.name ?? ''}?`}
        confirmLabel={`Delete ${deleting?.name ?? ''}`}
        danger
        busy={remove.isPending}
        onCancel={() => setDeleting(null)}
        onConfirm={() => deleting && remove.mutate(deleting)}
      >
        <p>
          Its pending deliveries resolve without being sent, and <code>{deleting?.url}</code> receives nothing
          more.
        </p>
        {remove.isError ? <ErrorBox error={remove.error} /> : null}
      </ConfirmDialog>

      <Section title={editing ? `Edit webhook ${editing.name}` : 'New webhook'}>
        {created ? (
          <p className="notice" role="status">
            Webhook {created}.
          </p>
        ) : null}
        {create.isError ? <ErrorBox error={create.error} /> : null}
        {!write.allowed ? <p className="muted">{write.reason} to add webhooks.</p> : null}
        <form className="form" onSubmit={submit}>
          <fieldset disabled={!write.allowed} className="plain-fieldset">
            <FormField label="Name" error={errorFor(errors, 'name')}>
              {({ id, describedBy, invalid }) => (
                <input
                  id={id}
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  value={name}
                  onChange={(e) => setName(e.target.value)}
                  required
                  maxLength={200}
                />
              )}
            </FormField>
            <Field label="Kind">
              {({ id }) => (
                <select id={id} value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
                  {KINDS.map((k) => (
                    <option key={k.value} value={k.value}>
                      {k.label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <FormField
              label="URL"
              hint={
                <>
                  http(s); may hold template actions such as {'{{.ResourceName}}'} in its path and query.
                  {editing && ' A stored URL is shown masked (********): leave it to keep it.'}
                </>
              }
              error={errorFor(errors, 'url')}
            >
              {({ id, describedBy, invalid }) => (
                <input
                  id={id}
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  value={url}
                  onChange={(e) => setUrl(e.target.value)}
                  required
                  inputMode="url"
                />
              )}
            </FormField>
            <fieldset>
              <legend>Events (none ticked: every type)</legend>
              <div className="checks">
                {EVENTS.map((type) => (
                  <label key={type} className="check">
                    <input
                      type="checkbox"
                      checked={events.includes(type)}
                      onChange={(e) =>
                        setEvents(e.target.checked ? [...events, type] : events.filter((t) => t !== type))
                      }
                    />
                    {type}
                  </label>
                ))}
              </div>
            </fieldset>
            <FormField
              label="Template"
              hint="Go-template text of the payload; empty uses the kind's built-in format."
              error={errorFor(errors, 'template')}
            >
              {({ id, describedBy, invalid }) => (
                <textarea
                  id={id}
                  aria-invalid={invalid}
                  value={template}
                  onChange={(e) => setTemplate(e.target.value)}
                  aria-describedby={describedBy}
                />
              )}
            </FormField>
            <details>
              <summary>Template variables</summary>
              <dl className="kv">
                {TEMPLATE_VARIABLES.map((v) => (
                  <div key={v.name} className="fact">
                    <dt>
                      <code>{`{{.${v.name}}}`}</code>
                    </dt>
                    <dd>{v.help}</dd>
                  </div>
                ))}
              </dl>
            </details>
            {template ? (
              <div>
                <h3 className="small">Preview with sample values</h3>
                <pre className="code" aria-live="polite" data-testid="template-preview">
                  {preview.text}
                </pre>
                {preview.unevaluated.length > 0 ? (
                  <p className="muted">
                    Not evaluated here (the server does, on Test): {preview.unevaluated.join(' ')}
                  </p>
                ) : null}
              </div>
            ) : null}
            <fieldset>
              <legend>Custom headers</legend>
              {editing ? (
                <p className="hint">
                  A value left as ******** keeps the stored value; type a new one to replace it.
                </p>
              ) : null}
              {headers.map((row, index) => (
                <div key={row.key} className="header-row">
                  <label>
                    Header name {index + 1}
                    <input
                      value={row.name}
                      onChange={(e) =>
                        setHeaders(
                          headers.map((h) => (h.key === row.key ? { ...h, name: e.target.value } : h)),
                        )
                      }
                    />
                  </label>
                  <label>
                    Header value {index + 1}
                    <input
                      type="password"
                      autoComplete="off"
                      value={row.value}
                      onChange={(e) =>
                        setHeaders(
                          headers.map((h) => (h.key === row.key ? { ...h, value: e.target.value } : h)),
                        )
                      }
                    />
                  </label>
                  <button
                    type="button"
                    className="button"
                    onClick={() => setHeaders(headers.filter((h) => h.key !== row.key))}
                  >
                    Remove header {index + 1}
                  </button>
                </div>
              ))}
              <button
                type="button"
                className="button"
                onClick={() => {
                  setHeaders([...headers, { key: nextKey, name: '', value: '' }]);
                  setNextKey(nextKey + 1);
                }}
              >
                Add header
              </button>
            </fieldset>
            <button type="submit" className="button primary" disabled={create.isPending}>
              {editing ? 'Save webhook' : 'Create webhook'}
            </button>
            {editing ? (
              <button type="button" className="button" onClick={reset}>
                Cancel edit
              </button>
            ) : null}
          </fieldset>
        </form>
      </Section>
    </>
  );
}
