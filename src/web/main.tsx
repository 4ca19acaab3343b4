import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, messageOf, type Account } from './api.js';
import { AccountPage } from './pages/account.js';
import { InstancePage } from './pages/instance.js';
import { ConversationsPage } from './pages/conversations.js';
import { InstancesPage } from './pages/instances.js';
import { SignInPage } from './pages/sign-in.js';
import { go, hrefOf, onLink, useRoute } from './router.js';
import './styles.css';

type Session = { state: 'loading' } | { state: 'signed-out' } | { state: 'signed-in'; account: Account } | { state: 'error'; message: string };

function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session>({ state: 'loading' });

  const loadAccount = async () => {
    try {
      setSession({ state: 'signed-in', account: await call<Account>('GET', '/account') });
    } catch (err) {
      setSession(err instanceof ApiError && err.status === 401 ? { state: 'signed-out' } : { state: 'error', message: messageOf(err) });
    }
  };
  useEffect(() => void loadAccount(), []);

  // Each view names itself in the tab and moves focus to its heading, for screen readers.
  useEffect(() => {
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [route, session.state]);

  const signOut = async () => {
    await call('DELETE', '/app/session').catch(() => undefined);
    setSession({ state: 'signed-out' });
    go({ view: 'sign-in' });
  };

  let page;
  if (session.state === 'loading') page = <p role="status">Loading…</p>;
  else if (session.state === 'error') page = <p role="alert" class="error">{session.message}</p>;
  else if (session.state === 'signed-out' || route.view === 'sign-in' || route.view === 'sign-up') {
    page = (
      <SignInPage
        mode={route.view === 'sign-up' ? 'sign-up' : 'sign-in'}
        onSignedIn={async () => {
          await loadAccount();
          if (route.view === 'sign-in' || route.view === 'sign-up') go({ view: 'instances' }, true);
        }}
      />
    );
  } else if (route.view === 'instance') page = <InstancePage id={route.id} />;
  else if (route.view === 'conversations') page = <ConversationsPage id={route.id} />;
  else if (route.view === 'account') page = <AccountPage />;
  else page = <InstancesPage />;

  return (
    <>
      <header class="top">
        <a class="brand" href={hrefOf({ view: 'instances' })} onClick={onLink({ view: 'instances' })}>
          Messaging Gateway
        </a>
        <nav aria-label="Main">
          <a href="/docs">API docs</a>
          {session.state === 'signed-in' && (
            <>
              <a class="who" href={hrefOf({ view: 'account' })} onClick={onLink({ view: 'account' })} title="Account">
                {session.account.email}
              </a>
              <button type="button" class="link" onClick={signOut}>
                Sign out
              </button>
            </>
          )}
        </nav>
      </header>
      <main>{page}</main>
    </>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
