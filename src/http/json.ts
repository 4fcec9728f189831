const serialized = new WeakMap<object, string>();

/**
 * The JSON text of a value that is shared and immutable while cached (say, a workspace's
 * workflow from the process cache), serialised once per cached object rather than per request.
 */
export function cachedJson(value: object): string {
  let text = serialized.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    serialized.set(value, text);
  }
  return text;
}
