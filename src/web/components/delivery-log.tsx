import { useEffect, useState } from 'preact/hooks';
import { call, callData, messageOf, type DeliveryPage, type DeliveryStatus } from '../api.js';
import { Alert, Notice } from './notices.js';

const PAGE_SIZE = 20;
/** The log changes as attempts run: it is read again this often while the page is open. */
const REFRESH_EVERY_MS = 3000;

/** The webhook's delivery log: filter by status, retry one by hand. */
export function DeliveryLog({ instanceId }: { instanceId: string }) {
  const [status, setStatus] = useState<'' | DeliveryStatus>('');
  const [page, setPage] = useState(1);
  const [log, setLog] = useState<DeliveryPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let current = true;
    const query = new URLSearchParams({ page: String(page), page_size: String(PAGE_SIZE), ...(status ? { status } : {}) });
    call<DeliveryPage>('GET', `/instances/${instanceId}/webhook/deliveries?${query}`)
      .then((answer) => current && (setLog(answer), setError(null)))
      .catch((err) => current && setError(messageOf(err)));
    const timer = setTimeout(() => setTick((n) => n + 1), REFRESH_EVERY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [instanceId, status, page, tick]);

  const retry = async (deliveryId: string) => {
    setNotice(null);
    try {
      const answer = await callData<{ status: DeliveryStatus }>('POST', `/instances/${instanceId}/webhook/deliveries/${deliveryId}/retry`);
      setNotice(`Delivery ${deliveryId} is ${answer.status} again.`);
      setTick((n) => n + 1);
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
