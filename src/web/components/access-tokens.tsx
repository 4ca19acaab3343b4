import { useEffect, useState } from 'preact/hooks';
import { listAccessTokens, messageOf, revokeAccessToken, type AccessToken } from '../api.js';
import { Alert, Notice } from './notices.js';

const ISSUED_BY: Record<AccessToken['issued_by'], string> = {
  password: 'E-mail and password (POST /auth/login)',
  client_credentials: 'Client credentials (POST /token)',
  web_app: 'Web app sign-in',
};

/** One date style for every time on the card; they differ only in the precision they have. */
const when = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
/** Use is recorded to the minute: seconds would pretend to a precision it does not have. */
const minute = (iso: string) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * The account's active access tokens, each revocable; this browser's own session is marked, and
 * revoking it signs this browser out. `version` changes when the list must be read again (after a
 * rotation renewed the session).
 */
export function AccessTokens({ version }: { version: number }) {
  const [tokens, setTokens] = useState<AccessToken[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const load = () => listAccessTokens().then(setTokens, (err) => setError(messageOf(err)));
  useEffect(() => void load(), [version]);

  const revoke = async (token: AccessToken) => {
    setError(null);
    setNotice(null);
    try {
      await revokeAccessToken(token.id);
      if (token.current) {
        // This browser's own token is dead: leave through the sign-in page.
        location.assign('/app/sign-in');
        return;
      }
      setNotice('Token revoked: it no longer opens the account.');
      await load();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section class="card" aria-labelledby="tokens-title">
      <h2 id="tokens-title">Active access tokens</h2>
      <p>Every access token that still opens this account. Revoking one ends it at once; the others keep working.</p>
      <Alert message={error} />
      <Notice message={notice} />
      {tokens && tokens.length === 0 && <p>No active tokens.</p>}
      {tokens && tokens.length > 0 && (
        <ul class="deliveries" id="access-tokens">
          {tokens.map((token) => (
            <li key={token.id} class="token" data-token-id={token.id}>
              <div class="row">
                <strong>{ISSUED_BY[token.issued_by]}</strong>
                {token.current && <span class="badge">This session</span>}
              </div>
              <div>
                Issued {when(token.issued_at)} to {token.address}
                {token.user_agent && <> ({token.user_agent})</>}
              </div>
              <div>
                Last used {token.last_used_at ? minute(token.last_used_at) : 'never'}; expires {when(token.expires_at)}
              </div>
              <button
                type="button"
                class="secondary danger small"
                aria-label={token.current ? 'Revoke and sign out (this session)' : `Revoke the token issued ${when(token.issued_at)}`}
                onClick={() => revoke(token)}
              >
                {token.current ? 'Revoke and sign out' : 'Revoke'}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
