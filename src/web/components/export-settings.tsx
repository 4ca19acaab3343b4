import { useEffect, useState } from 'preact/hooks';
import { ApiError, callData, EVENT_TYPES, messageOf, type ExportState } from '../api.js';
import { Alert, Notice } from './notices.js';

/** The instance's event export to the gateway's brokers: its event types and how far each broker is. */
export function ExportSettings({ instanceId }: { instanceId: string }) {
  const [state, setState] = useState<ExportState | null>(null);
  const [events, setEvents] = useState<Set<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const load = (next: ExportState) => {
    setState(next);
    setEvents(new Set(next.events.split(',').filter(Boolean)));
  };
  const refresh = () => callData<ExportState>('GET', `/instances/${instanceId}/export`).then(setState, () => undefined);

  useEffect(() => {
    callData<ExportState>('GET', `/instances/${instanceId}/export`).then(load, (err) => setError(messageOf(err)));
    // Lag and errors move while the page is open.
    const timer = setInterval(() => void refresh(), 5000);
    return () => clearInterval(timer);
  }, [instanceId]);

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
