/**
 * A phone's message as a client sends it: on shared backends the node asked forwards it to the
 * session's owner, and answers 503 with Retry-After while a session changes nodes (a killed
 * owner still holding its lease); the message is sent again after that wait, for up to a minute.
 */
export async function phoneMessage<R extends { status: number; headers: Headers }>(post: () => Promise<R>): Promise<R> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await post();
    if (res.status !== 503 || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 1000 * Math.min(2, Number(res.headers.get('retry-after') ?? 1) || 1)));
  }
}
