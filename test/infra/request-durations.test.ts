import { expect } from 'chai';
import { Histogram, Registry } from 'prom-client';
import { RequestDurations } from '../../src/infra/metrics/request-durations.js';

const NAME = 'gateway_http_request_duration_seconds';
const HELP = 'HTTP requests by method, route template and status';
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** Both histograms, each alone in a registry, fed the same observations. */
function pair() {
  const ours = new RequestDurations(NAME, HELP, BUCKETS);
  const oursRegistry = new Registry();
  oursRegistry.registerMetric(ours.asMetric());
  const theirsRegistry = new Registry();
  const theirs = new Histogram({ name: NAME, help: HELP, labelNames: ['method', 'route', 'status'], buckets: BUCKETS, registers: [theirsRegistry] });
  const observe = (method: string, route: string, status: number, seconds: number) => {
    ours.observe(method, route, status, seconds);
    theirs.observe({ method, route, status: String(status) }, seconds);
  };
  return { ours, oursRegistry, theirsRegistry, observe };
}

describe("request durations (prom-client's histogram exposition, counted cheaply)", () => {
  it("exposes what prom-client's Histogram exposes for the same requests, as text and as JSON", async () => {
    const { oursRegistry, theirsRegistry, observe } = pair();
    // On the bounds, between them, past the last, and the labels a template may hold.
    const seconds = [0, 0.001, 0.0011, 0.0025, 0.003, 0.05, 0.7, 10, 11, 42, 0.0001];
    for (const [i, s] of seconds.entries()) {
      observe('GET', '/instances/{id}', 200, s);
      observe(i % 2 ? 'POST' : 'GET', i % 3 ? '/instances/{id}/session/status' : 'unmatched', i % 2 ? 404 : 500, s);
    }
    observe('GET', '/a "quoted" \\ route', 200, 0.2);
    expect(await oursRegistry.metrics()).to.equal(await theirsRegistry.metrics());
    expect(await oursRegistry.getMetricsAsJSON()).to.deep.equal(await theirsRegistry.getMetricsAsJSON());
  });

  it('starts again from nothing when the registry is reset', async () => {
    const { oursRegistry, theirsRegistry, observe } = pair();
    observe('GET', '/health', 200, 0.002);
    oursRegistry.resetMetrics();
    theirsRegistry.resetMetrics();
    expect(await oursRegistry.metrics()).to.equal(await theirsRegistry.metrics());
    observe('GET', '/health', 200, 0.004);
    expect(await oursRegistry.metrics()).to.equal(await theirsRegistry.metrics());
  });
});
