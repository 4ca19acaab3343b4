import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, callData, EVENT_TYPES, messageOf, type ExportState } from '../api.js';
import type { LiveStream } from '../live/stream.js';
import { useLiveRead } from '../live/use-live.js';
import { Alert, Notice } from './notices.js';

/** While the stream is down, the export is read this often. */
const FALLBACK_MS = 5000;
/** A broker that is down or behind changes without an event on the stream: looked at this often, only then. */
const TROUBLE_MS = 5000;

const exporting = (state: ExportState | null) => !!state && state.sinks.length > 0 && state.events !== '';
const troubled = (state: ExportState | null) => exporting(state) && state!.sinks.some((s) => !s.connected || s.lag > 0);

/** The instance's event export to the gateway's brokers: its event types and how far each broker is. */
export function ExportSettings({ instanceId, live }: { instanceId: string; live: LiveStream }) {
  const [state, setState] = useState<ExportState | null>(null);
  const [events, setEvents] = useState<Set<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const load = (next: ExportState) => {
    setState(next);
    setEvents(new Set(next.events.split(',').filter(Boolean)));
  };

  // The first read sets the chosen types; later ones only how far the brokers are.
  const loaded = useRef(false);
  const read = useLiveRead(
    live,
    {
      read: async () => {
        try {
          const next = await callData<ExportState>('GET', `/instances/${instanceId}/export`);
          if (loaded.current) setState(next);
          else load(next);
          loaded.current = true;
        } catch (err) {
          if (!loaded.current) setError(messageOf(err));
        }
      },
      // Every event the instance has moves the export's lag while it exports.
      wants: () => exporting(stateRef.current),
      fallbackMs: FALLBACK_MS,
    },
    [instanceId],
  );
  const stateRef = useRef(state);
  stateRef.current = state;

  useEffect(() => {
    if (!troubled(state)) return;
    const timer = setTimeout(read, TROUBLE_MS);
    return () => clearTimeout(timer);
  }, [state]);

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
      load(await callData<ExportState>('POST', `/instances/${instanceId}/export`, { events: chosen.join(',') }));
      setSaved('Export saved.');
    } catch (err) {
      setError(err instanceof ApiError && err.status === 409 ? 'This gateway has no broker configured for the export.' : messageOf(err));
    }
  };

  const stop = async () => {
    setError(null);
    setSaved(null);
    try {
      load(await callData<ExportState>('DELETE', `/instances/${instanceId}/export`));
      setSaved('Export stopped.');
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section class="card" aria-labelledby="export-title">
      <h2 id="export-title">Event export</h2>
      {!state && !error && <p>Loading…</p>}
      {state && state.sinks.length === 0 && <p class="muted">This gateway exports to no broker (its operator sets EXPORT_AMQP_URL or EXPORT_NATS_URL).</p>}
      {state && state.sinks.length > 0 && (
        <>
          <p id="export-state">
            {state.events ? `Exporting ${state.events.split(',').join(', ')}` : 'Not exporting'} · {state.lag} waiting · published up to #{state.last_published_seq}
          </p>
          <table>
            <caption class="muted">Brokers</caption>
            <thead>
              <tr>
                <th scope="col">Broker</th>
                <th scope="col">Connection</th>
                <th scope="col">Waiting</th>
                <th scope="col">Published up to</th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {state.sinks.map((s) => (
                <tr key={s.sink}>
                  <td>{s.sink === 'amqp' ? 'RabbitMQ' : 'NATS JetStream'}</td>
                  <td>{s.connected ? 'connected' : 'down'}</td>
                  <td>{s.lag}</td>
                  <td>#{s.last_published_seq}</td>
                  <td>{s.last_error ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <form onSubmit={save} noValidate>
            <fieldset>
              <legend>Event types to export</legend>
              <label class="check">
                <input type="checkbox" checked={events.has('All')} onChange={(e) => toggle('All', e.currentTarget.checked)} /> All
              </label>
              {EVENT_TYPES.map((name) => (
                <label class="check" key={name}>
                  <input type="checkbox" checked={events.has(name)} disabled={events.has('All')} onChange={(e) => toggle(name, e.currentTarget.checked)} /> {name}
                </label>
              ))}
            </fieldset>
            <Notice message={saved} />
            <button type="submit">Save export</button>{' '}
            {state.events && (
              <button type="button" class="secondary" onClick={() => void stop()}>
                Stop export
              </button>
            )}
          </form>
        </>
      )}
      <Alert message={error} />
    </section>
  );
}
