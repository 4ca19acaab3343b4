import { useState } from 'preact/hooks';
import { call, messageOf, type SignedUp } from '../api.js';
import { hrefOf, onLink } from '../router.js';
import { Alert } from '../components/notices.js';

interface Props {
  mode: 'sign-in' | 'sign-up';
  onSignedIn: () => void | Promise<void>;
}

/** Sign-in and sign-up share one form; sign-up then shows the client secret, once. */
export function SignInPage({ mode, onSignedIn }: Props) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<SignedUp | null>(null);
  const signingUp = mode === 'sign-up';

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      if (signingUp) {
        const account = await call<SignedUp>('POST', '/auth/signup', { email, password });
        await call('POST', '/app/session', { email, password });
        setCreated(account);
      } else {
        await call('POST', '/app/session', { email, password });
        await onSignedIn();
      }
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  if (created) {
    return (
      <section class="card narrow" aria-labelledby="created-title">
        <h1 id="created-title" tabIndex={-1}>
          Account created
        </h1>
        <p>These client credentials let your servers ask for tokens (<code>POST /token</code>). The secret is shown only now: keep it somewhere safe.</p>
        <dl class="secrets">
          <dt>Client token</dt>
          <dd>
            <code>{created.client_token}</code>
          </dd>
          <dt>Client secret</dt>
          <dd>
            <code>{created.client_secret}</code>
          </dd>
        </dl>
        <button type="button" onClick={() => onSignedIn()}>
          Continue
        </button>
      </section>
    );
  }

  return (
    <section class="card narrow" aria-labelledby="auth-title">
      <h1 id="auth-title" tabIndex={-1}>
        {signingUp ? 'Create an account' : 'Sign in'}
      </h1>
      <form onSubmit={submit} noValidate>
        <label for="email">E-mail</label>
        <input id="email" type="email" autoComplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <label for="password">Password</label>
        <input
          id="password"
          type="password"
          autoComplete={signingUp ? 'new-password' : 'current-password'}
          required
          minLength={signingUp ? 8 : 1}
          aria-describedby={signingUp ? 'password-hint' : undefined}
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        {signingUp && (
          <p id="password-hint" class="hint">
            8 to 256 characters.
          </p>
        )}
        <Alert message={error} />
        <button type="submit" disabled={busy}>
          {signingUp ? 'Create account' : 'Sign in'}
        </button>
      </form>
      <p>
        {signingUp ? (
          <a href={hrefOf({ view: 'sign-in' })} onClick={onLink({ view: 'sign-in' })}>
            I have an account: sign in
          </a>
        ) : (
          <a href={hrefOf({ view: 'sign-up' })} onClick={onLink({ view: 'sign-up' })}>
            No account yet? Create one
          </a>
        )}
      </p>
    </section>
  );
}
