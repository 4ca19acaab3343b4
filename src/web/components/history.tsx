import { useEffect, useState } from 'preact/hooks';
import { call, messageOf, type Instance } from '../api.js';
import { Alert } from './notices.js';

interface HistoryEvent {
  position: string;
  id: string;
  type: string;
  stream: string;
  recorded_at: string;
  actor: { kind: string; id?: string };
  correlation_id: string;
  data: unknown;
}

interface HistoryPage {
  events: HistoryEvent[];
  next: string | null;
}

const PAGE = 50;

const who = (actor: HistoryEvent['actor']) => (actor.id ? `${actor.kind} ${actor.id}` : actor.kind);

/**
 * The instance's history as a timeline (oldest first, a page at a time), and the instance as it
 * was at a chosen moment: the auditor's two questions.
 */
export function History({ instanceId }: { instanceId: string }) {
  const [events, setEvents] = useState<HistoryEvent[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [at, setAt] = useState('');
  const [state, setState] = useState<Instance | null>(null);
  const [stateError, setStateError] = useState<string | null>(null);

  const load = async (after: string | null) => {
    setError(null);
    try {
      const query = new URLSearchParams({ limit: String(PAGE), ...(after ? { after } : {}) });
      const page = await call<HistoryPage>('GET', `/instances/${instanceId}/history?${query}`);
      setEvents((shown) => (after ? [...shown, ...page.events] : page.events));
      setNext(page.next);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  useEffect(() => {
    void load(null);
  }, [instanceId]);

  const showState = async (event: Event) => {
    event.preventDefault();
    setStateError(null);
    setState(null);
    const moment = new Date(at);
    if (Number.isNaN(moment.getTime())) return setStateError('Choose a date and time.');
    try {
      setState(await call<Instance>('GET', `/instances/${instanceId}/history/state?at=${encodeURIComponent(moment.toISOString())}`));
    } catch (err) {
      setStateError(messageOf(err));
    }
  };

  return (
    <section class="card" aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <Alert message={error} />
      {/* A scrolling region: focusable so a keyboard can scroll it too. */}
      <ol class="timeline" aria-label="Events, oldest first" tabIndex={0}>
        {events.map((e) => (
          <li key={e.id}>
            <time dateTime={e.recorded_at}>{new Date(e.recorded_at).toLocaleString()}</time> <strong>{e.type}</strong>{' '}
            <span class="muted">by {who(e.actor)}</span>
          </li>
        ))}
      </ol>
      {events.length === 0 && !error && <p class="muted">Nothing yet.</p>}
      {next && (
        <button type="button" class="secondary small" onClick={() => void load(next)}>
          Show more
        </button>
      )}
      <h3>The instance at a moment</h3>
      <form onSubmit={showState} class="inline" noValidate>
        <label for="state-at">Date and time</label>
        <input id="state-at" type="datetime-local" step={1} value={at} onInput={(e) => setAt(e.currentTarget.value)} />
        <button type="submit" class="secondary">
          Show
        </button>
      </form>
      <Alert message={stateError} />
      {state && (
        <dl class="secrets" id="state-at-moment">
          <dt>Name</dt>
          <dd>{state.name}</dd>
          <dt>Connected</dt>
          <dd>{state.connected ? 'yes' : 'no'}</dd>
          <dt>Webhook</dt>
          <dd>{state.webhook || 'none'}</dd>
          <dt>Billing</dt>
          <dd>{state.billing_status.toLowerCase()}</dd>
        </dl>
      )}
    </section>
  );
}
