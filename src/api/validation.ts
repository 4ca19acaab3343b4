import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { DomainError, invalidInput, type ErrorDetail } from '../domain/errors.js';

/** A compiled checker that answers 400 naming the first problem of each field. */
export class Validator<T extends TSchema> {
  private readonly check: TypeCheck<T>;
  /** Without defaults anywhere in the schema, a value that already checks is used as it came. */
  private readonly hasDefaults: boolean;

  constructor(
    private readonly schema: T,
    private readonly where: 'body' | 'query' | 'params',
  ) {
    this.check = TypeCompiler.Compile(schema);
    this.hasDefaults = declaresDefault(schema);
  }

  /** Query strings and path params arrive as text: convert to the schema's types first. */
  parse(value: unknown): unknown {
    if (!this.hasDefaults && this.check.Check(value)) return this.where === 'body' ? structuredCloneSafe(value) : value;
    const notInteger = this.where === 'body' ? [] : this.nonIntegerText(value);
    const withDefaults = this.withDefaults(value);
    if (notInteger.length === 0 && this.check.Check(withDefaults)) return withDefaults;
    const details: ErrorDetail[] = notInteger.map((field) => ({ field, message: 'must be an integer' }));
    const seen = new Set<string>(notInteger);
    for (const error of this.check.Errors(withDefaults)) {
      const field = fieldName(this.where, error.path, error.schema, error.value);
      if (seen.has(field)) continue;
      seen.add(field);
      details.push({ field, message: error.message });
    }
    const summary = details.map((d) => `${d.field}: ${d.message}`).join('; ');
    throw new DomainError('invalid_input', summary || `${this.where} is invalid`, details);
  }

  /**
   * TypeBox converts "2.5" to the integer 2; a query like `?page=2.5` is a mistake worth naming,
   * not a request for page 2.
   */
  private nonIntegerText(value: unknown): string[] {
    const properties = (this.schema as { properties?: Record<string, TSchema> }).properties;
    if (!properties || typeof value !== 'object' || value === null) return [];
    const fields: string[] = [];
    for (const [name, raw] of Object.entries(value)) {
      if (properties[name]?.type === 'integer' && typeof raw === 'string' && !/^[+-]?\d+$/.test(raw.trim())) fields.push(name);
    }
    return fields;
  }

  /**
   * Defaults and conversion are best effort: on a value of the wrong shape (an array where an
   * object belongs) TypeBox may throw, and the check below must still answer 400, not 500.
   */
  private withDefaults(value: unknown): unknown {
    try {
      if (this.where === 'body') return Value.Default(this.schema, structuredCloneSafe(value));
      return Value.Convert(this.schema, Value.Default(this.schema, value));
    } catch {
      return value;
    }
  }
}

function declaresDefault(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  if ('default' in schema) return true;
  return Object.values(schema).some(declaresDefault);
}

function fieldName(where: string, path: string, schema: TSchema, value: unknown): string {
  const field = path.replace(/^\//, '').replace(/\//g, '.');
  // An unknown property is reported on its parent; name the property itself.
  if (schema.additionalProperties === false && value && typeof value === 'object') {
    const known = Object.keys((schema.properties ?? {}) as object);
    const extra = Object.keys(value).find((k) => !known.includes(k));
    if (extra) return field ? `${field}.${extra}` : extra;
  }
  return field || where;
}

function structuredCloneSafe(value: unknown): unknown {
  return value === undefined ? undefined : structuredClone(value);
}

/** Deepest nesting of arrays and objects a body may have; deeper is refused before anything reads it. */
const MAX_JSON_DEPTH = 32;

/**
 * Refuses a body nested deeper than MAX_JSON_DEPTH (400). Walked with a stack, not recursion: the
 * value being measured is the one that could overflow a recursive walker (the validator, the
 * store's encoder).
 */
export function checkDepth(value: unknown): void {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    if (depth > MAX_JSON_DEPTH) throw invalidInput('body', `nested deeper than ${MAX_JSON_DEPTH} levels`);
    for (const child of Object.values(current)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
}

/** Longest path parameter any route takes; a route's own schema may bound it tighter. */
const MAX_PATH_PARAM = 256;

/** The path parameters as given, refused (400) when any is longer than MAX_PATH_PARAM. */
export function boundedParams(raw: Record<string, string>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value.length > MAX_PATH_PARAM) throw invalidInput(name, `must be at most ${MAX_PATH_PARAM} characters`);
    params[name] = value;
  }
  return params;
}
