// Reads the Prometheus text format into `name{label="value",…}` → value, labels sorted by name.
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`not a sample line: ${line}`)
    const labels = [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => `${k}="${v}"`).sort()
    out.set(labels.length ? `${m[1]}{${labels.join(',')}}` : m[1]!, Number(m[3]))
  }
  return out
}

/** The key parseMetrics uses for a series. */
export function series(name: string, labels: Record<string, string | number> = {}): string {
  const parts = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
  return parts.length ? `${name}{${parts.join(',')}}` : name
}
