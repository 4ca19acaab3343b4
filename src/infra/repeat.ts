/**
 * Runs `job` every `ms` until the timer is cleared, never keeping the process alive, with a
 * failed round told to `failed` (the next round tries again): the rounds of leases, claims and sweeps.
 */
export function repeat(ms: number, job: () => Promise<unknown>, failed: (err: unknown) => void): NodeJS.Timeout {
  const timer = setInterval(() => void job().catch(failed), ms);
  timer.unref();
  return timer;
}
