import { useEffect, useState } from 'preact/hooks';
import { call, messageOf } from '../api.js';
import { AccessTokens } from '../components/access-tokens.js';
import { Alert } from '../components/notices.js';

interface AccountDetails {
  account_id: string;
  user_id: number;
  email: string;
  client_token: string;
  created_at: string;
}

/** The client credentials (the token, and a new secret shown once when rotated) and the active access tokens. */
export function AccountPage() {
  const [account, setAccount] = useState<AccountDetails | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // Bumped when the session is renewed: the token list then holds a new current token.
  const [renewals, setRenewals] = useState(0);

  useEffect(() => {
    call<AccountDetails>('GET', '/account').then(setAccount, (err) => setError(messageOf(err)));
  }, []);

  const rotate = async () => {
    setError(null);
    try {
      const answer = await call<{ client_token: string; client_secret: string }>('POST', '/account/client-secret/rotate');
      // A rotation ends every access token issued before it, this session's too: renew it with the new secret.
      await call('POST', '/app/session', { client_token: answer.client_token, client_secret: answer.client_secret });
      setSecret(answer.client_secret);
      setConfirming(false);
      setRenewals((n) => n + 1);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>Account</h1>
      <Alert message={error} />
      {account && (
        <section class="card" aria-labelledby="credentials-title">
          <h2 id="credentials-title">Client credentials</h2>
          <dl class="secrets">
            <dt>E-mail</dt>
            <dd>{account.email}</dd>
            <dt>Client token</dt>
            <dd>
              <code id="client-token">{account.client_token}</code>
            </dd>
            <dt>Member since</dt>
            <dd>{new Date(account.created_at).toLocaleDateString()}</dd>
          </dl>
          <p>Servers exchange the client token and secret for an access token with <code>POST /token</code>.</p>
          {secret && (
            <div role="status">
              <p>
                <strong>New client secret</strong>, shown only now; the old one no longer works:
              </p>
              <code id="client-secret" class="wrap">
                {secret}
              </code>
            </div>
          )}
          {!confirming ? (
            <button type="button" class="secondary" onClick={() => setConfirming(true)}>
              Rotate client secret
            </button>
          ) : (
            <div role="group" aria-label="Confirm rotation">
              <p>The current secret stops working at once. Continue?</p>
              <button type="button" onClick={rotate}>
                Yes, issue a new secret
              </button>{' '}
              <button type="button" class="secondary" onClick={() => setConfirming(false)}>
                Keep the current one
              </button>
            </div>
          )}
        </section>
      )}
      {account && <AccessTokens version={renewals} />}
    </>
  );
}
