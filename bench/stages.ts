import type { Child } from './child.js';

/**
 * The gateway's own account of where its CPU goes (issue 31): its /metrics (the work counters of
 * src/infra/metrics/work-meter.ts) and its threads' CPU read before and after a phase, printed
 * per message. A CPU profile of the burst is flat and hangs most work under the microtask queue;
 * these are measured where the work happens. What they do not cover (HTTP parsing, Koa, the
 * sandbox network's reads and writes, GC) is the main thread's rest, printed beside them.
 */
export interface WorkSnapshot {
  series: Map<string, number>;
  threads: Map<string, number> | null;
}

const WANTED = /^gateway_(projection_|stage_|eventstore_appended_events_total|event_loop_active_seconds_total)/;

export async function workSnapshot(metricsUrl: string, gateway: Child): Promise<WorkSnapshot> {
  const text = await (await fetch(metricsUrl)).text();
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!WANTED.test(line)) continue;
    const cut = line.lastIndexOf(' ');
    series.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return { series, threads: gateway.threadCpuSeconds() };
}

type Labels = Record<string, string>;

function parse(key: string): { name: string; labels: Labels } {
  const open = key.indexOf('{');
  if (open < 0) return { name: key, labels: {} };
  const labels: Labels = {};
  for (const m of key.slice(open + 1, -1).matchAll(/(\w+)="([^"]*)"/g)) labels[m[1] as string] = m[2] as string;
  return { name: key.slice(0, open), labels };
}

interface Row {
  name: string;
  us: number;
  detail: string;
}

/** Lines of a table: µs of CPU per message for each projection and stage, sorted, then the totals. */
export function stageTable(before: WorkSnapshot, after: WorkSnapshot, messages: number): string[] {
  const delta = new Map<string, number>();
  for (const [key, value] of after.series) delta.set(key, value - (before.series.get(key) ?? 0));
  const perMsg = (v: number) => v / messages;
  const lanes = new Map<string, { fold: number; write: number; advance: number; batches: number; ignoredBatches: number; events: number; ignored: number; writes: number; ops: number }>();
  const lane = (p: string) => {
    let l = lanes.get(p);
    if (!l) lanes.set(p, (l = { fold: 0, write: 0, advance: 0, batches: 0, ignoredBatches: 0, events: 0, ignored: 0, writes: 0, ops: 0 }));
    return l;
  };
  const stages = new Map<string, { seconds: number; runs: number }>();
  let appended = 0;
  let activeSeconds = 0;
  for (const [key, value] of delta) {
    const { name, labels } = parse(key);
    const p = labels.projection ?? '';
    if (name === 'gateway_projection_busy_seconds_total') {
      const l = lane(p);
      if (labels.phase === 'fold') l.fold += value;
      if (labels.phase === 'write') l.write += value;
      if (labels.phase === 'advance') l.advance += value;
    } else if (name === 'gateway_projection_batches_total') {
      lane(p).batches += value;
      if (labels.outcome === 'ignored') lane(p).ignoredBatches += value;
    } else if (name === 'gateway_projection_events_total') {
      lane(p).events += value;
      if (labels.outcome === 'ignored') lane(p).ignored += value;
    } else if (name === 'gateway_projection_writes_total') {
      if (labels.unit === 'ops') lane(p).ops += value;
      else lane(p).writes += value;
    }
    else if (name === 'gateway_stage_busy_seconds_total') {
      const s = stages.get(labels.stage ?? '') ?? { seconds: 0, runs: 0 };
      stages.set(labels.stage ?? '', { ...s, seconds: s.seconds + value });
    } else if (name === 'gateway_stage_runs_total') {
      const s = stages.get(labels.stage ?? '') ?? { seconds: 0, runs: 0 };
      stages.set(labels.stage ?? '', { ...s, runs: s.runs + value });
    } else if (name === 'gateway_eventstore_appended_events_total') appended += value;
    else if (name === 'gateway_event_loop_active_seconds_total') activeSeconds += value;
  }
  const rows: Row[] = [];
  for (const [p, l] of lanes) {
    if (l.batches === 0 && l.writes === 0) continue;
    const us = (s: number) => perMsg(s * 1e6);
    rows.push({
      name: `projection ${p}`,
      us: us(l.fold + l.write + l.advance),
      detail: `fold ${us(l.fold).toFixed(1)} write ${us(l.write).toFixed(1)} advance ${us(l.advance).toFixed(1)} | batches/msg ${perMsg(l.batches).toFixed(2)} (${l.batches ? Math.round((100 * l.ignoredBatches) / l.batches) : 0}% ignored) writes/msg ${perMsg(l.writes).toFixed(2)} ops/msg ${perMsg(l.ops).toFixed(2)} events ignored ${l.events ? Math.round((100 * l.ignored) / l.events) : 0}%`,
    });
  }
  for (const [s, v] of stages) rows.push({ name: `stage ${s}`, us: perMsg(v.seconds * 1e6), detail: `runs/msg ${perMsg(v.runs).toFixed(2)}` });
  rows.sort((a, b) => b.us - a.us);
  // The stages are timed by the wall clock around synchronous work: on a busy machine the thread
  // also waits for a core inside them. The main thread's CPU over its busy wall time (event loop
  // utilization) says how much of a busy µs was CPU; each stage is scaled by it (the waits fall
  // at random, so evenly over the busy time).
  const threads = before.threads && after.threads ? [...after.threads].map(([name, s]) => ({ name, us: perMsg((s - (before.threads?.get(name) ?? 0)) * 1e6) })).filter((t) => t.us > 0).sort((a, b) => b.us - a.us) : null;
  const main = threads?.find((t) => t.name === 'main')?.us ?? null;
  const busy = perMsg(activeSeconds * 1e6);
  const cpuShare = main !== null && busy > 0 ? Math.min(1, main / busy) : 1;
  const accounted = rows.reduce((sum, r) => sum + r.us, 0);
  const lines = [
    `stage µs per message (${messages} messages, ${perMsg(appended).toFixed(2)} events appended each); wall µs of synchronous work, and as CPU (x ${cpuShare.toFixed(2)}: main thread CPU ${main?.toFixed(0) ?? '?'} µs / busy wall ${busy.toFixed(0)} µs):`,
  ];
  const width = Math.max(...rows.map((r) => r.name.length), 28);
  const cell = (wall: number | null, cpu: number) => `${wall === null ? ''.padStart(8) : wall.toFixed(1).padStart(8)} ${cpu.toFixed(1).padStart(8)}`;
  lines.push(`  ${'stage'.padEnd(width)} ${'wall'.padStart(8)} ${'cpu'.padStart(8)}`);
  for (const r of rows) lines.push(`  ${r.name.padEnd(width)} ${cell(r.us, r.us * cpuShare)}  ${r.detail}`);
  lines.push(`  ${'measured stages'.padEnd(width)} ${cell(accounted, accounted * cpuShare)}`);
  if (threads && main !== null) {
    lines.push(`  ${'main thread rest (HTTP, Koa, sandbox, reads, GC)'.padEnd(width)} ${cell(busy - accounted, main - accounted * cpuShare)}`);
    lines.push(`  ${'main thread'.padEnd(width)} ${cell(busy, main)}`);
    for (const t of threads) if (t.name !== 'main') lines.push(`  ${`other threads named ${t.name}`.padEnd(width)} ${cell(null, t.us)}`);
    lines.push(`  ${'process'.padEnd(width)} ${cell(null, threads.reduce((sum, t) => sum + t.us, 0))}`);
  }
  return lines;
}
