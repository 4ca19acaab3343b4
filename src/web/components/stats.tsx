import { useEffect, useState } from 'preact/hooks';
import { call, messageOf } from '../api.js';
import { Alert } from './notices.js';

interface Bucket {
  start: string;
  messages_in: number;
  messages_out: number;
  media_in: number;
  media_out: number;
  deliveries_ok: number;
  deliveries_failed: number;
  delivery_p95_ms: number | null;
  connected_seconds: number;
}

const WIDTH = 320;
const HEIGHT = 120;

/** Messages in and out per day for the last week, as bars, with the numbers in a table too. */
export function Stats({ instanceId }: { instanceId: string }) {
  const [buckets, setBuckets] = useState<Bucket[]>([]);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    call<{ buckets: Bucket[] }>('GET', `/instances/${instanceId}/stats?bucket=day`).then(
      (answer) => setBuckets(answer.buckets),
      (err) => setError(messageOf(err)),
    );
  }, [instanceId]);

  const max = Math.max(1, ...buckets.map((b) => Math.max(b.messages_in, b.messages_out)));
  const slot = buckets.length ? WIDTH / buckets.length : WIDTH;
  const bar = (n: number) => Math.round((n / max) * (HEIGHT - 16));

  return (
    <section class="card" aria-labelledby="stats-title">
      <h2 id="stats-title">Statistics</h2>
      <Alert message={error} />
      {buckets.length > 0 && (
        <>
          <svg class="chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label="Messages in and out per day">
            {buckets.map((b, i) => (
              <g key={b.start}>
                <rect x={i * slot + 2} y={HEIGHT - 14 - bar(b.messages_in)} width={slot / 2 - 3} height={bar(b.messages_in)} class="in" />
                <rect x={i * slot + slot / 2} y={HEIGHT - 14 - bar(b.messages_out)} width={slot / 2 - 3} height={bar(b.messages_out)} class="out" />
                <text x={i * slot + slot / 2} y={HEIGHT - 2} text-anchor="middle">
                  {new Date(b.start).toLocaleDateString(undefined, { weekday: 'short' })}
                </text>
              </g>
            ))}
          </svg>
          <p class="muted">
            <span class="key in" /> in <span class="key out" /> out
          </p>
          <table class="stats">
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">In</th>
                <th scope="col">Out</th>
                <th scope="col">Webhooks ok / failed</th>
              </tr>
            </thead>
            <tbody>
              {buckets.map((b) => (
                <tr key={b.start}>
                  <th scope="row">{new Date(b.start).toLocaleDateString()}</th>
                  <td>{b.messages_in}</td>
                  <td>{b.messages_out}</td>
                  <td>
                    {b.deliveries_ok} / {b.deliveries_failed}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
