import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, messageOf } from '../api.js';
import { Alert, Notice } from './notices.js';

interface Helpdesk {
  enabled: boolean;
  url: string;
  account_id: string;
  name_inbox: string;
  token_masked: string;
  inbox_id: number | null;
  sign_msg: boolean;
  import_contacts: boolean;
  import_messages: boolean;
  days_limit_import_messages: number;
  webhook_url: string;
  import_progress: { state: string; contacts_imported: number; messages_imported: number; messages_total: number } | null;
}

/**
 * The helpdesk (Chatwoot) configuration: where it is, the inbox, the access token (sent, never
 * shown again: only its mask), signing and history import; removing it stops the bridge.
 */
export function HelpdeskSettings({ instanceId }: { instanceId: string }) {
  const path = `/instances/${instanceId}/helpdesk`;
  const [current, setCurrent] = useState<Helpdesk | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [form, setForm] = useState({ url: '', account_id: '', name_inbox: 'WhatsApp', token: '', sign_msg: false, import_messages: false });
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const show = (config: Helpdesk | null) => {
    setCurrent(config);
    if (config) setForm({ url: config.url, account_id: config.account_id, name_inbox: config.name_inbox, token: '', sign_msg: config.sign_msg, import_messages: config.import_messages });
    setLoaded(true);
  };

  useEffect(() => {
    call<Helpdesk>('GET', path).then(show, (err) => (err instanceof ApiError && err.status === 404 ? show(null) : setError(messageOf(err))));
  }, [instanceId]);

  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setNotice(null);
    try {
      const body = {
        enabled: true,
        url: form.url.trim(),
        account_id: form.account_id.trim(),
        name_inbox: form.name_inbox.trim(),
        auto_create: true,
        sign_msg: form.sign_msg,
        import_contacts: form.import_messages,
        import_messages: form.import_messages,
        ...(form.token.trim() ? { token: form.token.trim() } : {}),
      };
      show(await call<Helpdesk>('POST', path, body));
      setNotice('Helpdesk saved: its inbox now sends agents’ answers here.');
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const remove = async () => {
    setError(null);
    try {
      await call('DELETE', path);
      show(null);
      setNotice('Helpdesk removed.');
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const field = (name: keyof typeof form) => (e: Event) =>
    setForm({ ...form, [name]: (e.currentTarget as HTMLInputElement).type === 'checkbox' ? (e.currentTarget as HTMLInputElement).checked : (e.currentTarget as HTMLInputElement).value });

  return (
    <section class="card" aria-labelledby="helpdesk-title">
      <h2 id="helpdesk-title">Helpdesk (Chatwoot)</h2>
      {!loaded && !error && <p>Loading…</p>}
      {loaded && (
        <form onSubmit={save} noValidate>
          <label for="helpdesk-url">Helpdesk address</label>
          <input id="helpdesk-url" type="url" placeholder="https://chatwoot.example.com" value={form.url} onInput={field('url')} />
          <label for="helpdesk-account">Account id in the helpdesk</label>
          <input id="helpdesk-account" inputMode="numeric" value={form.account_id} onInput={field('account_id')} />
          <label for="helpdesk-inbox">Inbox name</label>
          <input id="helpdesk-inbox" value={form.name_inbox} onInput={field('name_inbox')} />
          <label for="helpdesk-token">Access token{current ? ` (now ${current.token_masked}; leave empty to keep it)` : ''}</label>
          <input id="helpdesk-token" type="password" autoComplete="off" value={form.token} onInput={field('token')} />
          <label class="check">
            <input type="checkbox" checked={form.sign_msg} onChange={field('sign_msg')} /> Sign answers with the agent's name
          </label>
          <label class="check">
            <input type="checkbox" checked={form.import_messages} onChange={field('import_messages')} /> Import contacts and recent history
          </label>
          <div class="actions">
            <button type="submit">Save helpdesk</button>
            {current && (
              <button type="button" class="secondary danger" onClick={remove}>
                Remove helpdesk
              </button>
            )}
          </div>
        </form>
      )}
      <Alert message={error} />
      <Notice message={notice} />
      {current && (
        <dl class="secrets" id="helpdesk-current">
          <dt>Inbox</dt>
          <dd>{current.inbox_id === null ? 'not linked' : `#${current.inbox_id} ${current.name_inbox}`}</dd>
          <dt>Callback set in the inbox</dt>
          <dd>
            <code class="wrap">{current.webhook_url}</code>
          </dd>
          {current.import_progress && (
            <>
              <dt>History import</dt>
              <dd>
                {current.import_progress.state}: {current.import_progress.messages_imported} of {current.import_progress.messages_total} messages,{' '}
                {current.import_progress.contacts_imported} contacts
              </dd>
            </>
          )}
        </dl>
      )}
    </section>
  );
}
