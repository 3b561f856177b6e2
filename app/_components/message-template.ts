/**
 * A message whose arguments are all plain `{name}` (no plural, select or number format), formatted
 * once with marker values (private-use characters) and split around them: filling it in is a string join, where ICU formatting
 * per cell cost more than the rest of a 1,000-cell render. Same text as `t(key, values)`.
 */
export function fillIn<K extends string>(t: (key: string, values: Record<string, string>) => string, key: string, names: readonly K[]) {
  const parts = t(key, Object.fromEntries(names.map((n) => [n, `\uE000${n}\uE001`]))).split(/\uE000(\w+)\uE001/);
  return (values: Record<K, string>) => {
    let out = parts[0]!;
    for (let i = 1; i < parts.length; i += 2) out += values[parts[i] as K] + parts[i + 1]!;
    return out;
  };
}
