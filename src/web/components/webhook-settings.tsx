import { useEffect, useState } from 'preact/hooks';
import { callData, EVENT_TYPES, messageOf, type WebhookSettings as Settings } from '../api.js';
import { Alert, Notice } from './notices.js';

/** The webhook's URL and event types; the signing secret only when asked for. */
export function WebhookSettings({ instanceId }: { instanceId: string }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Set<string>>(new Set());
  const [secret, setSecret] = useState<string | null>(null);
  const [showSecret, setShowSecret] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  // The form appears once loaded: what is typed before would be overwritten by the load.
  const [loaded, setLoaded] = useState(false);

  const load = (settings: Settings) => {
    setUrl(settings.webhook);
    setEvents(new Set(settings.events.split(',').filter(Boolean)));
    setSecret(settings.secret);
    setLoaded(true);
  };

  useEffect(() => {
    callData<Settings>('GET', `/instances/${instanceId}/webhook`).then(load, (err) => setError(messageOf(err)));
  }, [instanceId]);

  const rotateSecret = async () => {
    setError(null);
    try {
      setSecret((await callData<{ secret: string }>('POST', `/instances/${instanceId}/webhook/secret/rotate`)).secret);
      setSaved('New signing secret: deliveries from now on are signed with it.');
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const toggle = (name: string, on: boolean) => {
    const next = new Set(events);
    if (on) next.add(name);
    else next.delete(name);
    setEvents(next);
  };

  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setSaved(null);
    try {
      const chosen = events.has('All') ? ['All'] : EVENT_TYPES.filter((name) => events.has(name));
      await callData('POST', `/instances/${instanceId}/webhook`, { webhookURL: url.trim(), events: chosen.join(',') });
      load(await callData<Settings>('GET', `/instances/${instanceId}/webhook`));
      setSaved(url.trim() ? 'Webhook saved.' : 'Webhook cleared.');
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section class="card" aria-labelledby="webhook-title">
      <h2 id="webhook-title">Webhook</h2>
      {!loaded && !error && <p>Loading…</p>}
      {loaded && (
        <form onSubmit={save} noValidate>
          <label for="webhook-url">URL that receives the events</label>
          <input
            id="webhook-url"
            type="url"
            inputMode="url"
            placeholder="https://example.com/hooks/whatsapp"
            aria-describedby="webhook-url-hint"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
          <p id="webhook-url-hint" class="hint">
            Leave empty to stop deliveries.
          </p>
          <fieldset>
            <legend>Event types</legend>
            <label class="check">
              <input type="checkbox" checked={events.has('All')} onChange={(e) => toggle('All', e.currentTarget.checked)} /> All
            </label>
            {EVENT_TYPES.map((name) => (
              <label class="check" key={name}>
                <input type="checkbox" checked={events.has(name)} disabled={events.has('All')} onChange={(e) => toggle(name, e.currentTarget.checked)} />{' '}
                {name}
              </label>
            ))}
          </fieldset>
          <Notice message={saved} />
          <button type="submit">Save webhook</button>
        </form>
      )}
      <Alert message={error} />
      <div class="secret">
        <button type="button" class="secondary" aria-expanded={showSecret} onClick={() => setShowSecret(!showSecret)}>
          {showSecret ? 'Hide signing secret' : 'Show signing secret'}
        </button>
        {showSecret && secret && (
          <>
            <p>
              Deliveries are signed (Standard Webhooks) with <code id="webhook-secret">{secret}</code>
            </p>
            <button type="button" class="secondary small" onClick={() => void rotateSecret()}>
              New signing secret
            </button>
          </>
        )}
      </div>
    </section>
  );
}
