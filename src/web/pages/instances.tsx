import { useEffect, useState } from 'preact/hooks';
import { rememberCreated } from '../created.js';
import { call, messageOf, type Instance, type InstancePage } from '../api.js';
import { go, hrefOf, onLink } from '../router.js';
import { Alert } from '../components/notices.js';

const PAGE_SIZE = 20;
const BILLING_STATUSES = ['TRIALING', 'ACTIVE', 'PAST_DUE', 'EXPIRED', 'CANCELED'];

/** The account's instances: search, paging, and creating one (which opens it). */
export function InstancesPage() {
  const [query, setQuery] = useState('');
  const [connected, setConnected] = useState<'' | 'true' | 'false'>('');
  const [billing, setBilling] = useState('');
  const [page, setPage] = useState(1);
  const [list, setList] = useState<InstancePage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [createError, setCreateError] = useState<string | null>(null);

  useEffect(() => {
    let current = true;
    const filter = {
      ...(query.trim() ? { query: query.trim() } : {}),
      ...(connected ? { connected: connected === 'true' } : {}),
      ...(billing ? { billing_status: billing } : {}),
    };
    call<InstancePage>('POST', '/instances/list', { page, size: PAGE_SIZE, filter })
      .then((answer) => current && (setList(answer), setError(null)))
      .catch((err) => current && setError(messageOf(err)));
    return () => {
      current = false;
    };
  }, [query, connected, billing, page]);

  const create = async (event: Event) => {
    event.preventDefault();
    setCreateError(null);
    try {
      const created = await call<Instance>('PUT', '/instances/create', { name: name.trim() });
      if (created.token) rememberCreated(created.id, created.token);
      go({ view: 'instance', id: created.id });
    } catch (err) {
      setCreateError(messageOf(err));
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>Instances</h1>
      <section class="card" aria-labelledby="create-title">
        <h2 id="create-title">New instance</h2>
        <form onSubmit={create} class="inline" noValidate>
          <label for="instance-name">Name</label>
          <input id="instance-name" required minLength={3} maxLength={255} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <button type="submit">Create instance</button>
        </form>
        <Alert message={createError} />
      </section>
      <section class="card" aria-labelledby="list-title">
        <h2 id="list-title">Your instances</h2>
        <label for="instance-search">Search by name, id or phone</label>
        <input
          id="instance-search"
          type="search"
          value={query}
          onInput={(e) => {
            setQuery(e.currentTarget.value);
            setPage(1);
          }}
        />
        <div class="filters">
          <div>
            <label for="filter-connected">Connection</label>
            <select
              id="filter-connected"
              value={connected}
              onChange={(e) => {
                setConnected(e.currentTarget.value as '' | 'true' | 'false');
                setPage(1);
              }}
            >
              <option value="">any</option>
              <option value="true">connected</option>
              <option value="false">not connected</option>
            </select>
          </div>
          <div>
            <label for="filter-billing">Billing</label>
            <select
              id="filter-billing"
              value={billing}
              onChange={(e) => {
                setBilling(e.currentTarget.value);
                setPage(1);
              }}
            >
              <option value="">any</option>
              {BILLING_STATUSES.map((s) => (
                <option value={s} key={s}>
                  {s.toLowerCase().replace('_', ' ')}
                </option>
              ))}
            </select>
          </div>
        </div>
        <Alert message={error} />
        {list && list.content.length === 0 && <p>No instances{query || connected || billing ? ' match' : ' yet'}.</p>}
        {list && list.content.length > 0 && (
          <ul class="instances">
            {list.content.map((instance) => (
              <li key={instance.id}>
                <a href={hrefOf({ view: 'instance', id: instance.id })} onClick={onLink({ view: 'instance', id: instance.id })}>
                  {instance.name}
                </a>
                <span class={instance.connected ? 'badge ok' : 'badge'}>{instance.connected ? 'connected' : 'not connected'}</span>
                <span class="badge">{instance.billing_status.toLowerCase()}</span>
                <code class="muted">{instance.id}</code>
              </li>
            ))}
          </ul>
        )}
        {list && list.total_pages > 1 && (
          <nav class="pager" aria-label="Pages">
            <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Previous
            </button>
            <span>
              Page {list.page} of {list.total_pages}
            </span>
            <button type="button" disabled={page >= list.total_pages} onClick={() => setPage(page + 1)}>
              Next
            </button>
          </nav>
        )}
      </section>
    </>
  );
}
