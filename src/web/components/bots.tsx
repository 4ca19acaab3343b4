import { useEffect, useState } from 'preact/hooks';
import { callData, messageOf } from '../api.js';
import { Alert, Notice } from './notices.js';

interface Bot {
  bot_id: string;
  kind: 'typebot' | 'openai';
  enabled: boolean;
  url: string;
  typebot?: string;
  model?: string;
  api_key_masked: string | null;
  trigger: { type: string; value?: string };
  stop_keyword: string | null;
}

interface BotSession {
  jid: string;
  status: string;
  exchanges: number;
  paused_by: string | null;
  last_error: string | null;
  last_activity_at: string;
}

/** The instance's bots: configure one (Typebot or OpenAI-compatible), see its conversations, pause or resume one. */
export function Bots({ instanceId }: { instanceId: string }) {
  const [bots, setBots] = useState<Bot[]>([]);
  const [chosen, setChosen] = useState<string | null>(null);
  const [sessions, setSessions] = useState<BotSession[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [form, setForm] = useState({ bot_id: '', kind: 'openai', url: '', typebot: '', model: '', api_key: '', trigger: 'all', trigger_value: '', stop_keyword: '', delay_ms: '1000', vision: false });
  const base = `/instances/${instanceId}/bots`;

  const loadBots = async () => setBots(await callData<Bot[]>('GET', base));
  const loadSessions = async (botId: string) => setSessions(await callData<BotSession[]>('GET', `${base}/${encodeURIComponent(botId)}/sessions`));

  useEffect(() => {
    loadBots().catch((err: unknown) => setError(messageOf(err)));
  }, [instanceId]);
  useEffect(() => {
    if (chosen) loadSessions(chosen).catch((err: unknown) => setError(messageOf(err)));
  }, [chosen]);

  const set = (field: keyof typeof form) => (event: Event) => setForm({ ...form, [field]: (event.target as HTMLInputElement).value });

  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setSaved(null);
    const body: Record<string, unknown> = { kind: form.kind, url: form.url, delay_ms: Number(form.delay_ms) || 0, trigger: form.trigger === 'all' ? { type: 'all' } : { type: form.trigger, value: form.trigger_value } };
    if (form.stop_keyword) body.stop_keyword = form.stop_keyword;
    if (form.kind === 'typebot') body.typebot = form.typebot;
    else {
      body.model = form.model;
      if (form.api_key) body.api_key = form.api_key;
      body.vision = form.vision;
    }
    try {
      await callData('POST', `${base}/${encodeURIComponent(form.bot_id)}`, body);
      setForm({ ...form, api_key: '' });
      setSaved(`Bot ${form.bot_id} saved.`);
      await loadBots();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const act = async (jid: string, action: 'pause' | 'resume') => {
    if (!chosen) return;
    setError(null);
    try {
      await callData('POST', `${base}/${encodeURIComponent(chosen)}/sessions/${encodeURIComponent(jid)}/${action}`);
      await loadSessions(chosen);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section class="card" aria-labelledby="bots-title">
      <h2 id="bots-title">Bots</h2>
      <Alert message={error} />
      <Notice message={saved} />
      {bots.length === 0 ? (
        <p>No bots yet.</p>
      ) : (
        <div class="table-scroll">
        <table class="people">
          <thead>
            <tr>
              <th>Bot</th>
              <th>Kind</th>
              <th>Trigger</th>
            </tr>
          </thead>
          <tbody>
            {bots.map((b) => (
              <tr key={b.bot_id}>
                <td>
                  {/* The bot's name opens its conversations: no column of buttons to push off a phone's screen. */}
                  <button type="button" class="link" aria-label={`Conversations of ${b.bot_id}`} aria-pressed={chosen === b.bot_id} onClick={() => setChosen(b.bot_id)}>
                    {b.bot_id}
                  </button>
                </td>
                <td>
                  {b.kind === 'typebot' ? `Typebot ${b.typebot ?? ''}` : `OpenAI · ${b.model ?? ''}`}
                  {b.api_key_masked && <div class="muted">key {b.api_key_masked}</div>}
                </td>
                <td>{b.trigger.type === 'all' ? 'every message' : `${b.trigger.type}: ${b.trigger.value ?? ''}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
      {chosen && (
        <div aria-label={`Conversations of ${chosen}`}>
          <h3>Conversations of {chosen}</h3>
          <button type="button" onClick={() => void loadSessions(chosen).catch((err: unknown) => setError(messageOf(err)))}>
            Refresh conversations
          </button>
          {sessions.length === 0 ? (
            <p>No conversations yet.</p>
          ) : (
            <div class="table-scroll">
            <table class="people">
              <thead>
                <tr>
                  <th>Contact</th>
                  <th>Status</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {sessions.map((s) => (
                  <tr key={s.jid}>
                    <td title={s.jid}>{contactOf(s.jid)}</td>
                    <td>
                      <span class="status">{s.paused_by ? `${s.status} (by ${s.paused_by})` : s.status}</span>
                      <div class="muted">{s.exchanges === 1 ? '1 exchange' : `${s.exchanges} exchanges`}</div>
                      {s.last_error && <div class="muted">last error: {s.last_error}</div>}
                    </td>
                    <td>
                      {s.status === 'active' && (
                        <button type="button" aria-label={`Pause ${s.jid}`} onClick={() => void act(s.jid, 'pause')}>
                          Pause
                        </button>
                      )}
                      {s.status === 'paused' && (
                        <button type="button" aria-label={`Resume ${s.jid}`} onClick={() => void act(s.jid, 'resume')}>
                          Resume
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            </div>
          )}
        </div>
      )}
      <form onSubmit={save} aria-label="Save a bot">
        <h3>Save a bot</h3>
        <label>
          Bot id <input name="bot_id" required pattern="[A-Za-z0-9_\-]{1,64}" value={form.bot_id} onInput={set('bot_id')} />
        </label>
        <label>
          Kind{' '}
          <select name="kind" value={form.kind} onChange={set('kind')}>
            <option value="openai">OpenAI-compatible</option>
            <option value="typebot">Typebot</option>
          </select>
        </label>
        <label>
          Server URL <input name="url" type="url" required value={form.url} onInput={set('url')} />
        </label>
        {form.kind === 'typebot' ? (
          <label>
            Flow public id <input name="typebot" required value={form.typebot} onInput={set('typebot')} />
          </label>
        ) : (
          <>
            <label>
              Model <input name="model" required value={form.model} onInput={set('model')} />
            </label>
            <label>
              API key <input name="api_key" type="password" autocomplete="off" value={form.api_key} onInput={set('api_key')} />
            </label>
            <label>
              <input name="vision" type="checkbox" checked={form.vision} onChange={(event) => setForm({ ...form, vision: (event.target as HTMLInputElement).checked })} /> Vision: send contacts' images too
            </label>
          </>
        )}
        <label>
          Trigger{' '}
          <select name="trigger" value={form.trigger} onChange={set('trigger')}>
            <option value="all">every message</option>
            <option value="keyword">keyword</option>
            <option value="regex">pattern</option>
          </select>
        </label>
        {form.trigger !== 'all' && (
          <label>
            Trigger value <input name="trigger_value" required value={form.trigger_value} onInput={set('trigger_value')} />
          </label>
        )}
        <label>
          Stop keyword <input name="stop_keyword" value={form.stop_keyword} onInput={set('stop_keyword')} />
        </label>
        <label>
          Typing before each answer (ms) <input name="delay_ms" type="number" min="0" max="20000" value={form.delay_ms} onInput={set('delay_ms')} />
        </label>
        <button type="submit">Save bot</button>
      </form>
    </section>
  );
}

/** A contact as people read it (+55…); a group, or anything else, as its jid. */
function contactOf(jid: string): string {
  const phone = /^(\d+)@s\.whatsapp\.net$/.exec(jid)?.[1];
  return phone ? `+${phone}` : jid;
}
