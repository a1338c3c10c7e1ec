import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { ApiError, api, apiKey, request } from '../api';
import { ErrorBox, Loading } from '../components/common';

const OIDC_REASONS: Record<string, string> = {
  state_mismatch: 'the sign-in took too long or was started in another tab; try again',
};

/** Sign in: OIDC providers, break-glass when enabled, or an API key for development. */
export default function SignIn() {
  const search = useSearch({ from: '/login' });
  const navigate = useNavigate();
  const client = useQueryClient();
  const options = useQuery({
    queryKey: ['auth', 'sign-in-options'],
    queryFn: () => api.get('/api/v1/auth/sign-in-options'),
  });
  const [key, setKey] = useState('');
  const [actor, setActor] = useState('');
  const [password, setPassword] = useState('');
  const [failure, setFailure] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  // The console reads the caller from this cache: fill it before leaving, so a stale
  // "signed out" answer from before cannot send the browser back here.
  const enter = async () => {
    client.setQueryData(['auth', 'me'], await api.get('/api/v1/auth/me'));
    await navigate({ to: '/' });
  };

  const withKey = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setFailure(null);
    apiKey.set(key.trim());
    try {
      await enter();
      setKey('');
    } catch (error) {
      apiKey.clear();
      setFailure(
        error instanceof ApiError && error.status === 401
          ? new Error('The API key was not accepted.')
          : error,
      );
    } finally {
      setBusy(false);
    }
  };

  const withBreakglass = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setFailure(null);
    apiKey.clear();
    try {
      await request('POST', '/auth/breakglass/login', { actor_id: actor.trim(), password });
      setPassword('');
      await enter();
    } catch (error) {
      setPassword('');
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="signin" id="main">
      <h1>Sign in to certwright</h1>
      {search.error ? (
        <div className="error" role="alert">
          <strong>Sign-in failed</strong>
          <p>
            {(search.reason && OIDC_REASONS[search.reason]) ?? `reason: ${search.reason ?? search.error}`}
          </p>
        </div>
      ) : null}
      {failure ? <ErrorBox error={failure} /> : null}
      {options.isPending ? <Loading what="Loading sign-in options" /> : null}
      {options.isError ? <ErrorBox error={options.error} /> : null}
      {options.data && options.data.providers.length > 0 ? (
        <section className="card" aria-labelledby="oidc-heading">
          <h2 id="oidc-heading">Single sign-on</h2>
          <ul className="providers">
            {options.data.providers.map((provider) => (
              <li key={provider.id}>
                <a
                  className="button primary"
                  href={`/auth/oidc/login?provider=${encodeURIComponent(provider.id)}`}
                >
                  Sign in with {provider.name}
                </a>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {options.data?.breakglass ? (
        <section className="card" aria-labelledby="breakglass-heading">
          <h2 id="breakglass-heading">Break-glass</h2>
          <p className="muted">For when the identity provider is down. Every use is audited.</p>
          <form onSubmit={withBreakglass} className="form">
            <label>
              Actor id
              <input
                value={actor}
                onChange={(e) => setActor(e.target.value)}
                autoComplete="username"
                required
              />
            </label>
            <label>
              Password
              <input
                type="password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                autoComplete="current-password"
                required
              />
            </label>
            <button type="submit" className="button" disabled={busy}>
              Sign in with break-glass
            </button>
          </form>
        </section>
      ) : null}
      {options.data?.auth_type === 'api-key' ? (
        <section className="card" aria-labelledby="apikey-heading">
          <h2 id="apikey-heading">API key (development)</h2>
          <p className="muted">Kept in this tab only (sessionStorage) and sent as the bearer token.</p>
          <form onSubmit={withKey} className="form">
            <label>
              API key
              <input
                type="password"
                value={key}
                onChange={(e) => setKey(e.target.value)}
                autoComplete="off"
                required
              />
            </label>
            <button type="submit" className="button" disabled={busy}>
              Sign in with API key
            </button>
          </form>
        </section>
      ) : null}
      {options.data?.auth_type === 'none' ? (
        <p>
          This server runs without authentication. <a href="/">Open the console</a>.
        </p>
      ) : null}
    </main>
  );
}
