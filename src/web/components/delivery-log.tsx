import { useEffect, useState } from 'preact/hooks';
import { call, callData, messageOf, type Delivery, type DeliveryPage, type DeliveryStatus } from '../api.js';
import type { LiveStream } from '../live/stream.js';
import { useLiveRead } from '../live/use-live.js';
import { Alert, Notice } from './notices.js';

const PAGE_SIZE = 20;
/** While the stream is down, the log is read this often. */
const FALLBACK_MS = 3000;
/** A pending delivery without a time for its next attempt is being attempted (at most 10 s). */
const IN_FLIGHT_MS = 2000;

/**
 * The webhook's delivery log: filter by status, retry one by hand. Every event of the stream
 * may become a delivery (its id is the delivery's id), so each one reads the log; attempts are
 * not events, so a pending delivery is read again when the log says its next attempt is due.
 */
export function DeliveryLog({ instanceId, live }: { instanceId: string; live: LiveStream }) {
  const [status, setStatus] = useState<'' | DeliveryStatus>('');
  const [page, setPage] = useState(1);
  const [log, setLog] = useState<DeliveryPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const [pending, setPending] = useState<Delivery[]>([]);

  const read = useLiveRead(
    live,
    {
      read: async () => {
        const query = new URLSearchParams({ page: String(page), page_size: String(PAGE_SIZE), ...(status ? { status } : {}) });
        const pendingQuery = new URLSearchParams({ page: '1', page_size: String(PAGE_SIZE), status: 'pending' });
        try {
          const base = `/instances/${instanceId}/webhook/deliveries`;
          // The pending ones, whatever the filter: their next attempts are when the log changes.
          const [answer, due] = await Promise.all([
            call<DeliveryPage>('GET', `${base}?${query}`),
            status === 'pending' ? null : call<DeliveryPage>('GET', `${base}?${pendingQuery}`),
          ]);
          setLog(answer);
          setPending((due ?? answer).content.filter((d) => d.status === 'pending'));
          setError(null);
          return new Set([...answer.content, ...(due?.content ?? [])].map((d) => d.id));
        } catch (err) {
          setError(messageOf(err));
        }
      },
      wants: () => true,
      keyOf: (event) => event.id,
      fallbackMs: FALLBACK_MS,
    },
    [instanceId, status, page],
  );

  useEffect(() => {
    if (pending.length === 0) return;
    const now = Date.now();
    const due = Math.min(...pending.map((d) => (d.next_attempt_at ? Math.max(Date.parse(d.next_attempt_at) - now + 300, IN_FLIGHT_MS) : IN_FLIGHT_MS)));
    const timer = setTimeout(read, due);
    return () => clearTimeout(timer);
  }, [pending]);

  const retry = async (deliveryId: string) => {
    setNotice(null);
    try {
      const answer = await callData<{ status: DeliveryStatus }>('POST', `/instances/${instanceId}/webhook/deliveries/${deliveryId}/retry`);
      setNotice(`Delivery ${deliveryId} is ${answer.status} again.`);
      read();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section class="card" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <label for="delivery-status">Show</label>
      <select
        id="delivery-status"
        value={status}
        onChange={(e) => {
          setStatus(e.currentTarget.value as '' | DeliveryStatus);
          setPage(1);
        }}
      >
        <option value="">all deliveries</option>
        <option value="pending">pending</option>
        <option value="delivered">delivered</option>
        <option value="failed">failed</option>
      </select>
      <Alert message={error} />
      <Notice message={notice} />
      {log && log.content.length === 0 && <p>No deliveries{status ? ` ${status}` : ' yet'}.</p>}
      {log && log.content.length > 0 && (
        <ul class="deliveries">
          {log.content.map((d) => (
            <li key={d.id} data-delivery={d.id}>
              <div class="row">
                <strong>{d.type}</strong>
                <span class={`badge ${d.status === 'delivered' ? 'ok' : d.status === 'failed' ? 'bad' : ''}`}>{d.status}</span>
                <time dateTime={d.created_at}>{new Date(d.created_at).toLocaleString()}</time>
              </div>
              <div class="muted">
                {d.attempts} attempt{d.attempts === 1 ? '' : 's'}
                {d.last_status_code !== null ? ` · last answer ${d.last_status_code}` : ''}
                {d.last_error ? ` · ${d.last_error}` : ''}
              </div>
              {d.status !== 'pending' && (
                <button type="button" class="secondary small" onClick={() => retry(d.id)} aria-label={`Retry delivery ${d.id} (${d.type})`}>
                  Retry
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {log && log.total_pages > 1 && (
        <nav class="pager" aria-label="Delivery pages">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span>
            Page {log.page} of {log.total_pages}
          </span>
          <button type="button" disabled={page >= log.total_pages} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </nav>
      )}
    </section>
  );
}
