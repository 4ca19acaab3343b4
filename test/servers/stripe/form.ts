/**
 * Stripe's request bodies are form-encoded with bracketed keys (`items[0][price]=..`,
 * `metadata[instance_id]=..`, `expand[0]=..`); this turns them into plain objects and arrays.
 */
export type FormValue = string | FormValue[] | { [key: string]: FormValue };

export function parseForm(text: string): Record<string, FormValue> {
  const root: Record<string, FormValue> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, '').split('[');
    let node: Record<string, FormValue> | FormValue[] = root;
    path.forEach((part, i) => {
      const last = i === path.length - 1;
      const slot = part === '' && Array.isArray(node) ? String(node.length) : part;
      const container = node as Record<string, FormValue>;
      if (last) {
        container[slot] = value;
        return;
      }
      const nextIsIndex = /^\d*$/.test(path[i + 1] as string);
      container[slot] ??= nextIsIndex ? [] : {};
      node = container[slot] as Record<string, FormValue> | FormValue[];
    });
  }
  return root;
}
