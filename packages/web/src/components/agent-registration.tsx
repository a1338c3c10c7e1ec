import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { usePermission } from '../auth';
import { errorFor, fieldErrors } from '../form-errors';
import { ActionButton, Section } from './common';
import { Copyable } from './copyable';
import { FormField, FormProblem } from './form-field';

interface Registered {
  id: string;
  name: string;
  api_key: string;
}

/**
 * The commands that install and start certwright-agent with this key (docs/agent/README.md,
 * "Installing certwright-agent"); the key goes into a 0600 file, not into the environment file.
 */
export function installCommands(agent: Registered, serverUrl: string): string {
  return [
    'npm install -g @certwright/agent',
    'install -d -m 0700 /etc/certwright-agent',
    `(umask 077; printf '%s' '${agent.api_key}' > /etc/certwright-agent/agent.key)`,
    "(umask 077; cat > /etc/certwright-agent/agent.env <<'EOF'",
    `SVC_SERVER_URL=${serverUrl}`,
    `SVC_AGENT_ID=${agent.id}`,
    'SVC_AGENT_API_KEY_FILE=/etc/certwright-agent/agent.key',
    'EOF',
    ')',
    'systemctl enable --now certwright-agent',
  ].join('\n');
}

/**
 * Register an agent: its key is shown once, here, with the install commands that use it; the
 * server keeps only the key's hash, so leaving the page loses it (register again, and retire
 * the unused agent).
 */
export function AgentRegistration() {
  const allowed = usePermission('agent.register');
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [hostname, setHostname] = useState('');
  const [registered, setRegistered] = useState<Registered | null>(null);
  const register = useMutation({
    mutationFn: () => api.post('/api/v1/agents', { body: { name: name.trim(), hostname: hostname.trim() } }),
    onSuccess: async (agent) => {
      setRegistered({ id: agent.id, name: agent.name, api_key: agent.api_key });
      setName('');
      setHostname('');
      await client.invalidateQueries({ queryKey: ['agents'] });
    },
  });
  const errors = fieldErrors(register.error);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setRegistered(null);
    register.mutate();
  };
  return (
    <Section title="Register an agent">
      {registered ? (
        <div className="notice" role="status">
          <p>
            Registered <strong>{registered.name}</strong> (<code>{registered.id}</code>). Its key is shown
            this once: the server keeps only its hash.
          </p>
          <dl className="kv">
            <dt>Agent id</dt>
            <dd>
              <Copyable value={registered.id} label="agent id" />
            </dd>
            <dt>Agent key</dt>
            <dd>
              <Copyable value={registered.api_key} label="agent key" />
            </dd>
          </dl>
          <p id="install-commands">Install and start it on the host:</p>
          <pre className="code" data-testid="install-commands">
            {installCommands(registered, window.location.origin)}
          </pre>
          <Copyable
            value={installCommands(registered, window.location.origin)}
            label="install commands"
            shown="(the commands above)"
          />
          <p>
            <button type="button" className="button" onClick={() => setRegistered(null)}>
              I have stored the key
            </button>
          </p>
        </div>
      ) : null}
      <FormProblem error={register.error} shown={['name', 'hostname']} />
      {!allowed.allowed ? <p className="muted">{allowed.reason}.</p> : null}
      <form className="form" onSubmit={submit} aria-label="Register an agent">
        <fieldset className="plain-fieldset" disabled={!allowed.allowed}>
          <FormField label="Name" error={errorFor(errors, 'name')}>
            {({ id, describedBy, invalid }) => (
              <input
                id={id}
                value={name}
                required
                aria-describedby={describedBy}
                aria-invalid={invalid}
                onChange={(e) => setName(e.target.value)}
              />
            )}
          </FormField>
          <FormField label="Host name" hint="the host it runs on" error={errorFor(errors, 'hostname')}>
            {({ id, describedBy, invalid }) => (
              <input
                id={id}
                value={hostname}
                required
                aria-describedby={describedBy}
                aria-invalid={invalid}
                onChange={(e) => setHostname(e.target.value)}
              />
            )}
          </FormField>
          <ActionButton {...allowed} type="submit" className="button primary" disabled={register.isPending}>
            Register agent
          </ActionButton>
        </fieldset>
      </form>
    </Section>
  );
}
