import { expect } from 'chai';
import { newAccount, newInstance, startTestGateway, type TestGateway } from '../support/gateway.js';
import { newPhone, pairByQr, waitFor } from '../support/sandbox.js';
import { Receiver } from '../webhooks/support/receiver.js';

/** The Prometheus text format, parsed into samples: name, labels, value. */
function parse(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not Prometheus text: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] as string] = pair[2] as string;
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return samples;
}

describe('metrics (/metrics, Prometheus text)', () => {
  const TOKEN = 'metrics-token-0123456789';
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway({ METRICS_TOKEN: TOKEN });
  });
  after(async () => t.stop());

  it('answers only with the metrics token, and counts requests by route template, appends and projection lag', async () => {
    expect((await t.api('GET', '/metrics')).status).to.equal(401);
    expect((await t.api('GET', '/metrics', { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).to.equal(401);
    const owner = await newAccount(t.api);
    const { id } = await newInstance(t.api, owner);
    for (let i = 0; i < 3; i++) await t.api('GET', `/instances/${id}`, { token: owner.jwt });
    const res = await t.api('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain/);
    const samples = parse(res.text);
    const count = samples.find((s) => s.name === 'gateway_http_request_duration_seconds_count' && s.labels.route === '/instances/{id}' && s.labels.method === 'GET' && s.labels.status === '200');
    expect(count?.value).to.equal(3);
    const appended = samples.find((s) => s.name === 'gateway_eventstore_appended_events_total');
    expect(appended?.value).to.be.greaterThan(0);
    expect(samples.some((s) => s.name === 'gateway_eventstore_append_duration_seconds_count' && s.labels.outcome === 'ok' && s.value > 0)).to.equal(true);
    const lags = samples.filter((s) => s.name === 'gateway_projection_lag_positions');
    expect(lags.map((s) => s.labels.projection)).to.include.members(['instances', 'accounts', 'webhooks']);
    expect(samples.some((s) => s.name === 'gateway_sessions' )).to.equal(true);
    expect(samples.some((s) => s.name === 'gateway_queue_depth' && s.labels.queue === 'helpdesk_jobs')).to.equal(true);
  });
});

describe('metrics without a token, and on a port of their own', () => {
  it('is 404 on the API port when METRICS_TOKEN is unset', async () => {
    const t = await startTestGateway();
    try {
      expect((await t.api('GET', '/metrics')).status).to.equal(404);
    } finally {
      await t.stop();
    }
  });

  it('serves METRICS_PORT without a token, and not on the API port', async () => {
    const t = await startTestGateway({ METRICS_PORT: '0', METRICS_TOKEN: 'metrics-token-0123456789' });
    try {
      expect(t.gateway.metricsUrl).to.be.a('string');
      const res = await fetch(t.gateway.metricsUrl as string);
      expect(res.status).to.equal(200);
      expect(parse(await res.text()).some((s) => s.name === 'gateway_http_request_duration_seconds_count' || s.name.startsWith('gateway_process_'))).to.equal(true);
      expect((await t.api('GET', '/metrics', { headers: { authorization: 'Bearer metrics-token-0123456789' } })).status).to.equal(404);
    } finally {
      await t.stop();
    }
  });
});

describe('metrics of webhook deliveries', function () {
  this.timeout(20_000);
  const TOKEN = 'metrics-token-0123456789';
  it('counts attempts by outcome and times delivered webhooks from their event', async () => {
    const rx = await new Receiver().start();
    const t = await startTestGateway({ METRICS_TOKEN: TOKEN, MESSAGING_NETWORK: 'sandbox' });
    try {
      const owner = await newAccount(t.api);
      const { id } = await newInstance(t.api, owner);
      const me = await newPhone(t.api, owner);
      const them = await newPhone(t.api, owner);
      await pairByQr(t.api, owner, id, me.phone);
      await t.api('POST', `/instances/${id}/webhook`, { token: owner.jwt, body: { webhookURL: rx.url, events: 'Message' } });
      await t.api('POST', `/sandbox/phones/${them.phone}/messages`, { token: owner.jwt, body: { to: me.phone, text: 'counted' } });
      await waitFor(() => rx.received.length === 1, 'the delivery');
      let samples: ReturnType<typeof parse> = [];
      await waitFor(async () => {
        samples = parse((await t.api('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).text);
        return samples.some((s) => s.name === 'gateway_webhook_attempts_total' && s.labels.outcome === 'delivered' && s.value === 1);
      }, 'the attempt counted');
      expect(samples.find((s) => s.name === 'gateway_webhook_delivery_latency_seconds_count')?.value).to.equal(1);
    } finally {
      await t.stop();
      await rx.stop();
    }
  });
});
