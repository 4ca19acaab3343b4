import { useRef, useState } from 'preact/hooks';
import { messageOf } from '../api.js';
import { preview, readFile, sendAnswer, type Message } from '../conversations.js';
import { Alert } from './notices.js';

/** The operator's answer: text, optionally quoting a message, optionally with an image or a document. */
export function AnswerBox({ instanceId, jid, replyTo, onCancelReply, onSent }: { instanceId: string; jid: string; replyTo: Message | null; onCancelReply: () => void; onSent: (id: string) => void }) {
  const [text, setText] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!text.trim() && !file) return;
    setBusy(true);
    setError(null);
    try {
      const attached = file ? { name: file.name, type: file.type, base64: await readFile(file) } : undefined;
      const id = await sendAnswer(instanceId, jid, { text, ...(replyTo ? { replyTo: replyTo.message_id } : {}), ...(attached ? { file: attached } : {}) });
      setText('');
      setFile(null);
      if (fileInput.current) fileInput.current.value = '';
      onSent(id);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="answer" onSubmit={submit} aria-label="Answer">
      {replyTo && (
        <p class="replying">
          Replying to: <q>{preview(replyTo)}</q>{' '}
          <button type="button" class="link" onClick={onCancelReply}>
            cancel
          </button>
        </p>
      )}
      <label for="answer-text">Message</label>
      <textarea
        id="answer-text"
        rows={2}
        value={text}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey) void submit(e);
        }}
      />
      <label for="answer-file">Attach an image or a document</label>
      <input id="answer-file" type="file" ref={fileInput} onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
      <Alert message={error} />
      <button type="submit" disabled={busy || (!text.trim() && !file)}>
        {busy ? 'Sending…' : 'Send'}
      </button>
    </form>
  );
}
