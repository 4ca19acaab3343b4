import { RE2 } from 're2-wasm';
import { invalidInput } from '../domain/errors.js';
import type { BotSettings } from '../domain/bots/events.js';

/** A trigger's pattern is short, and what it reads is cut to this: matching stays cheap whatever arrives. */
export const MAX_PATTERN = 256;
const MAX_MATCHED_CHARS = 4096;

/**
 * A regex trigger runs on RE2 (linear time, no backtracking): a pattern that would backtrack for
 * ever in JavaScript's engine (`(a+)+$`) runs in linear time here, and what RE2 cannot promise
 * (backreferences, lookaround) is refused at save with a 400.
 */
export function compileTrigger(pattern: string): RE2 {
  if (pattern.length === 0 || pattern.length > MAX_PATTERN) throw invalidInput('trigger.value', `a pattern of 1 to ${MAX_PATTERN} characters`);
  try {
    return new RE2(pattern, 'iu');
  } catch (err) {
    throw invalidInput('trigger.value', `not a pattern the gateway can run in linear time (no backreferences or lookaround): ${(err as Error).message}`);
  }
}

const compiled = new Map<string, RE2>();

/** Whether a message starts a conversation with the bot. */
export function triggers(trigger: BotSettings['trigger'], text: string): boolean {
  switch (trigger.type) {
    case 'all':
      return true;
    case 'keyword':
      return trigger.value !== undefined && text.trim().toLowerCase().includes(trigger.value.trim().toLowerCase());
    case 'regex': {
      const pattern = trigger.value ?? '';
      let re = compiled.get(pattern);
      if (!re) {
        try {
          re = compileTrigger(pattern);
        } catch {
          return false;
        }
        if (compiled.size > 1000) compiled.clear();
        compiled.set(pattern, re);
      }
      return re.test(text.slice(0, MAX_MATCHED_CHARS));
    }
  }
}
